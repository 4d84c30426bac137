"""Copies used on another stream with no event (rule ``cross_stream_copy_without_event``, R19).

The serving stacks' trackers (vllm-ascend, MindIE) report intermittent hangs and stale reads when a
non-blocking host<->device copy of pinned memory, or a ``copy_`` into a persistent buffer, runs on one
stream beside HCCL and compute streams and is read on another with no event: the copy engine and the
reader race, and on a loaded machine the read sees half a buffer (PyTorch's CUDA semantics notes,
"Stream semantics of backward passes" and "non_blocking", state the same rule for CUDA streams:
record an event after the copy, wait on it before the use, or ``record_stream``).

The happens-before walk (:mod:`airctl.verify.happens_before`) already finds the unordered pair; this
rule gives the pair whose side is a copy its own name, words and hint, in place of the generic race
finding (one finding per pair, not two).
"""

from __future__ import annotations

from airctl.graph.model import Graph, Node
from airctl.verify.capture_unsafe import host_copy
from airctl.verify.findings import Finding
from airctl.verify.rules import make_finding

RACE = "race_cross_stream_without_wait"
_DEVICE_COPIES = ("copy_", "copy", "_copy_from", "_copy_from_and_resize")  # copy: functionalized copy_


def copy_kind(node: Node | None) -> str | None:
    """What transfer ``node`` is (host<->device, pinned, non-blocking), or None for other ops: a dtype
    cast (``_to_copy`` with only ``dtype``) and a plain ``copy_`` are not transfers here."""
    if node is None:
        return None
    host = host_copy(node)
    if host is not None:
        return host.removeprefix("is ")
    parts = node.op.split(".")
    base = parts[1] if len(parts) >= 2 and parts[0] == "aten" else ""
    kwargs = node.attrs.get("kwargs") if isinstance(node.attrs.get("kwargs"), dict) else {}
    args = node.attrs.get("args")
    positional = base in _DEVICE_COPIES and isinstance(args, list) and len(args) > 2 and args[2] is True
    if kwargs.get("non_blocking") is not True and not positional:  # copy_(dst, src, True): ATen's non_blocking
        return None  # a plain in-place copy_ is the race rule's in-place hazard
    if base in _DEVICE_COPIES:
        return "a non-blocking copy into a buffer (a transfer the copy engine finishes later)"
    if base in ("_to_copy", "to"):
        return "a non-blocking copy (a transfer the copy engine finishes later)"
    return None


def copy_findings(graph: Graph, findings: list[Finding]) -> list[Finding]:
    """``findings`` with each race whose side is a copy replaced by this rule's finding."""
    out: list[Finding] = []
    for f in findings:
        if f.rule != RACE or len(f.nodes) < 2:
            out.append(f)
            continue
        first, second = graph.get(f.nodes[0]), graph.get(f.nodes[1])
        copy, kind = next(((n, k) for n in (first, second) if (k := copy_kind(n)) is not None), (None, None))
        if copy is None:
            out.append(f)
            continue
        hint = ("record an event on the copy's stream right after " f"{copy.name} and wait on it where the other "
                f"stream uses the data (or keep the copy on the reader's stream); {f.hint or ''}").rstrip("; ")
        new = make_finding("cross_stream_copy_without_event", f.mode,
                           f"{copy.name} is {kind}; {f.message}", list(f.nodes), graph, hint=hint)
        if new is None:
            out.append(f)
            continue
        new.source, new.mode = f.source, f.mode
        out.append(new)
    return out

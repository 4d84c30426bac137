"""Capture-unsafe work inside a captured region (rule ``capture_unsafe_op``, R17).

reduce-overhead and npugraph_ex capture the whole compiled graph as one aclgraph (NPU graph): the
kernels are recorded once and replayed. Work that needs the host in the middle cannot be captured.
The public reports this rule comes from:

- ``rtMemcpy ... ErrCode=107030 [the current capture mode does not support this operation]`` and
  ``507015`` at capture end, in the serving stacks' trackers (vllm-ascend, MindIE) when a synchronous
  copy or a host read ran inside ``torch.npu.graph`` capture (CANN's aclmdlRICaptureBegin documents
  that synchronous memory copies and host synchronisation are not allowed while capturing);
- PyTorch's CUDA-graph rules, which aclgraph follows (torch.cuda.graphs docs, "Constraints"): no
  ``.item()``, ``.cpu()``, ``.tolist()``, no synchronous copies, no ops whose output size depends on
  the data (``nonzero`` without a size).

A graph reaches its final stage with such ops when Dynamo is told to keep them
(``capture_scalar_outputs``, ``capture_dynamic_output_shape_ops``) or a custom op hides them. Max-autotune
(GE) compiles the graph instead of capturing it, so the rule does not apply there.

>>> from airctl.graph.model import Graph, Node
>>> g = Graph("g", "fx", [Node("x", "placeholder", kind="placeholder"),
...     Node("s", "aten._local_scalar_dense.default", ["x"], kind="call_function"),
...     Node("output", "output", ["x"], kind="output")])
>>> [(f.rule, f.nodes) for f in capture_unsafe_findings(g, "reduce-overhead")]
[('capture_unsafe_op', ['s'])]
"""

from __future__ import annotations

from typing import Any

from airctl.graph.model import Graph, Node
from airctl.graph.roles import OP_KINDS
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.rules import RULES, make_finding

# ATen base name -> what it does to a capture
HOST_SYNC = {
    "_local_scalar_dense": "reads a device value on the host (.item(), .tolist(), int()/float() of a tensor)",
    "item": "reads a device value on the host (.item())",
    "is_nonzero": "reads a device value on the host (bool() of a tensor)",
    "equal": "reads the comparison's result on the host (torch.equal)",
}
DATA_DEPENDENT = {
    "nonzero": "has an output size that depends on the data (nonzero without a size)",
    "masked_select": "has an output size that depends on the data (masked_select)",
    "unique": "has an output size that depends on the data (unique)",
    "_unique": "has an output size that depends on the data (unique)",
    "_unique2": "has an output size that depends on the data (unique)",
    "unique_dim": "has an output size that depends on the data (unique)",
    "unique_consecutive": "has an output size that depends on the data (unique_consecutive)",
    "argwhere": "has an output size that depends on the data (argwhere)",
    "bincount": "has an output size that depends on the data (bincount without minlength)",
}
COPIES = ("_to_copy", "to", "copy_", "_copy_from", "_copy_from_and_resize", "cpu", "pin_memory", "_pin_memory")


def _base(op: str) -> str:
    parts = op.split(".")
    return parts[1] if len(parts) >= 2 and parts[0] == "aten" else ""


def _kwargs(node: Node) -> dict[str, Any]:
    kwargs = node.attrs.get("kwargs")
    return kwargs if isinstance(kwargs, dict) else {}


def host_copy(node: Node) -> str | None:
    """Why ``node`` is a host<->device copy (a device of ``cpu`` named, pinned memory), or None."""
    base = _base(node.op)
    if base not in COPIES:
        return None
    if base in ("cpu", "pin_memory", "_pin_memory"):
        return f"copies to the host ({base})"
    kwargs = _kwargs(node)
    words = " ".join(str(v) for k, v in kwargs.items() if k in ("device", "pin_memory"))
    words += " " + " ".join(str(a) for a in (node.attrs.get("args") or [])[1:] if isinstance(a, str))
    if "cpu" not in words and kwargs.get("pin_memory") is not True:
        return None
    blocking = "a non-blocking" if kwargs.get("non_blocking") is True else "a synchronous"
    return f"is {blocking} host<->device copy ({node.op})"


def why_unsafe(node: Node) -> str | None:
    """What makes ``node`` uncapturable, or None."""
    base = _base(node.op)
    if base in HOST_SYNC:
        return HOST_SYNC[base]
    if base in DATA_DEPENDENT:
        if base == "bincount" and _kwargs(node).get("minlength") not in (None, 0):
            return None
        return DATA_DEPENDENT[base]
    if base == "repeat_interleave" and node.op.endswith(".Tensor") and _kwargs(node).get("output_size") is None:
        return "has an output size that depends on the data (repeat_interleave without output_size)"
    return host_copy(node)


_CANDIDATES = {*HOST_SYNC, *DATA_DEPENDENT, *COPIES, "repeat_interleave"}


def capture_unsafe_findings(graph: Graph, mode: Mode, ops: set[str] | None = None) -> list[Finding]:
    """One finding per capture-unsafe node of ``graph`` under ``mode`` (none in max-autotune); ``ops``:
    the graph's distinct ops, when the caller has them (a graph with none of the ops is not walked)."""
    mode = Mode.parse(mode).semantics
    if RULES["capture_unsafe_op"].severity(mode) is None:  # not a rule of this mode
        return []
    candidates = {op for op in (ops if ops is not None else {n.op for n in graph.nodes}) if _base(op) in _CANDIDATES}
    if not candidates:
        return []
    found: list[Finding] = []
    region = next((n for n in graph.nodes if n.kind in OP_KINDS), None)
    began = f" (the captured region, graph {graph.name}, begins at {region.name}" + (
        f", {region.source})" if region is not None and region.source else ")") if region is not None else ""
    for node in graph.nodes:
        if node.op not in candidates or node.kind not in OP_KINDS:
            continue
        why = why_unsafe(node)
        if why is None:
            continue
        f = make_finding("capture_unsafe_op", mode,
                         f"{node.name} {why} inside a captured region{began}: the capture fails on the NPU "
                         "(107030 / 507015) or the replay reuses the value read while capturing",
                         [node.name], graph)
        if f is not None:
            found.append(f)
    return found

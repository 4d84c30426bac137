"""What went wrong in a compile, said so a user can act: the one translation of a failure.

Whatever a compile raises — a YAML pass's own error, TorchAir's converter error wrapped by Dynamo,
a full disk under TorchAir's dumps, the user's model raising, a bug in airctl — becomes one
:class:`~airctl.errors.AirctlError` naming, where it can, the FX node, its source line and a hint
(:func:`translate`). Chains are walked by :func:`airctl.errors.exception_chain` only.
"""

from __future__ import annotations

import errno
import re
import traceback
from pathlib import Path
from typing import Any

from airctl.errors import AirctlBug, AirctlError, CompileError, exception_chain, find_in_chain
from airctl.graph.model import split_source
from airctl.ledger.writer import LedgerWriter, cannot_write

AIRCTL_DIR = Path(__file__).resolve().parents[2]
_TARGET = re.compile(r"\b((?:torch\.ops\.)?(?:aten|prims|npu|air|_c10d_functional|npu_define)\.[A-Za-z0-9_]+"
                     r"(?:\.[A-Za-z0-9_]+)?)")
_FULL_DISK = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def root_of(exc: BaseException) -> BaseException:
    """The innermost wrapped exception (Dynamo's inner_exception, causes; not the context)."""
    *_, last = exception_chain(exc, context=False)
    return last


def root_message(exc: BaseException) -> str:
    """The innermost meaningful message of a Dynamo-wrapped backend failure."""
    seen = root_of(exc)
    text = f"{type(seen).__name__}: {seen}"
    text = re.sub(r"\n\s*\[ERROR\].*", "", text)
    text = text.split("Traceback (most recent call last):", 1)[0]  # TorchAir embeds one (pretty_error_msg)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[:6])


def disk_full(exc: BaseException) -> OSError | None:
    """An OSError for a full disk (or a file-size limit) anywhere in the chain: TorchAir re-raises OSErrors
    as new ones holding only text, so the original is found through ``__context__``."""
    return next((e for e in exception_chain(exc) if isinstance(e, OSError) and e.errno in _FULL_DISK), None)


def _locate_node(session: Any, ledger: LedgerWriter, message: str) -> tuple[str | None, str | None]:
    """Find the FX node an error message talks about (converter errors name the target)."""
    if session is None or session.current is None:
        return None, None
    stage = ledger.last_stage(session.current, "fx")
    if stage is None:
        return None, None
    try:
        graph = ledger.stage_graph(stage)
    except (AirctlError, OSError):  # the snapshot is not to be had (a full disk): the error stands without a node
        return None, None
    for m in _TARGET.finditer(message):
        target = m.group(1).removeprefix("torch.ops.")
        for node in graph.nodes:
            if node.op == target or node.op == target + ".default" or node.name == target:
                return node.name, node.source
    names = {n.name: n.source for n in graph.nodes}
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", message):
        if word in names and any(ch.isdigit() or ch == "_" for ch in word) and len(word) > 3:
            return word, names[word]
    return None, None


def _deadlock_error(session: Any, message: str) -> AirctlError | None:
    """A forward reference TorchAir (FX lint) refuses is, in a stream plan, a wait on a record that
    only comes later: when the verifier found a ``deadlock_cycle`` say that, not "used before defined"."""
    if session is None or "before it has been defined" not in message:
        return None
    rows = session.findings()
    cycle = next((r for r in rows if r.get("rule") == "deadlock_cycle"), None)
    if cycle is None:
        return None
    nodes = cycle.get("nodes") or []
    return CompileError(
        f"the stream plan deadlocks (verifier rule deadlock_cycle, first after stage {cycle.get('stage')} of graph "
        f"{cycle.get('graph')}): {cycle.get('message')}; TorchAir refused the graph before anything ran",
        node=nodes[0] if nodes else None,
        hint="a pass put a wait before the record it waits for: make every wait come after its records "
             "(`airctl check` on the ledger shows the cycle)")


def _blame_airctl(root: BaseException, message: str) -> AirctlError | None:
    """An exception raised inside airctl's own code (not TorchAir's, not the user's): a bug to report,
    or a documented sim limitation (messages starting with "sim:")."""
    frames = traceback.extract_tb(root.__traceback__)
    if not frames or AIRCTL_DIR not in Path(frames[-1].filename).resolve().parents:
        return None
    last = frames[-1]
    if str(root).startswith("sim:"):
        return CompileError(f"not simulated: {message}", hint="run this model on an NPU (--backend npu), or keep the "
                            "op out of the graph; docs/sim.md lists what sim does not simulate")
    where = f"{Path(last.filename).relative_to(AIRCTL_DIR.parent)}:{last.lineno}"
    return AirctlBug(f"airctl failed (a bug in airctl, at {where}): {message}",
                     hint="rerun with --traceback and report it with the ledger; the ledger keeps what was captured")


def _own_error(exc: BaseException) -> AirctlError | None:
    """An AirctlError in the chain (a PassError from a YAML pass, say), as first raised: TorchAir's error
    wrapper (pretty_error_msg) raises a copy of the same type whose message has its traceback appended."""
    inner = find_in_chain(exc, AirctlError)
    while inner is not None:
        original = find_in_chain(inner.__cause__ or inner.__context__, type(inner))
        if original is None or not inner.message.startswith(str(original)):
            return inner
        inner = original
    return None


def _users_error(root: BaseException, model_path: Path | None) -> AirctlError | None:
    """Raised by the user's own code, under compile: the user's error, with the user's frames."""
    if model_path is None or not isinstance(root, (Exception, SystemExit)):
        return None
    from airctl.pipeline.run.model_script import user_code_error, user_frames

    frames = user_frames(root, Path(model_path))
    innermost = traceback.extract_tb(root.__traceback__)
    if frames and innermost and frames[-1] == innermost[-1]:
        return user_code_error(root, Path(model_path), "the model, while TorchAir compiled or ran it,")
    return None


def translate(exc: BaseException, session: Any, ledger: LedgerWriter, model_path: Path | None = None,
              backend: Any = None) -> AirctlError:
    """The compile's failure as one AirctlError (see the module)."""
    own = _own_error(exc)
    if own is not None:
        return own
    full = disk_full(exc)
    if full is not None:
        return cannot_write(ledger.root, full)  # a full disk, whoever was writing (TorchAir's dumps too)
    message = root_message(exc)
    root = root_of(exc)
    for known in (_users_error(root, model_path), _blame_airctl(root, message), _deadlock_error(session, message)):
        if known is not None:
            return known
    node, source = _locate_node(session, ledger, message)
    file, line = split_source(source) if source and ":" in source else (None, None)
    model = ledger.run_index.model or {}
    hint = backend.hint(message, model.get("path")) if backend is not None else None
    if hint is None and ("ge_converter is not implemented" in message or "converter" in message.lower()):
        hint = ("TorchAir has no GE converter for this op: rewrite it with supported ops, register one with "
                "torchair.register_fx_node_ge_converter, or try --mode reduce-overhead")
    elif hint is None and ("scope_enter" in message or "scope_exit" in message):
        hint = "scope_enter/scope_exit must pair up in graph order (rule R1/R2); run `airctl check` on the ledger"
    from airctl.pipeline.compile.converter_errors import converter_error  # every op it cannot convert

    unconvertible = converter_error(session, ledger, message, node, hint)
    if unconvertible is not None:
        return unconvertible
    where = f" at FX node {node}" if node else ""
    return CompileError(f"TorchAir failed to compile the model{where}: {message}", file=file, line=line, node=node,
                        hint=hint)

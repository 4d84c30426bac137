"""A GE conversion failure, told as every op TorchAir cannot convert in the graph that failed.

TorchAir stops at the first op it cannot convert. When a compile fails that way, the graph it
was converting is the run's last FX snapshot: :func:`converter_error` asks TorchAir's converter
table about all of its ops (:mod:`airctl.verify.converter_coverage`) and turns the failure into
one :class:`~airctl.errors.UnconvertibleOps` naming them all, each with its node count, first
source line, reason and known workaround. Called from the compile error translation
(``compiler._translate``); anything else it leaves alone (returns None).
"""

from __future__ import annotations

import re
from typing import Any

from airctl.errors import AirctlError, UnconvertibleOps
from airctl.graph.model import split_source

# words of TorchAir's conversion failures (converter lookup, auto-generation, a stub's NotImplementedError,
# a converter's own check of its arguments: aten.eq.Tensor's "Inputs data type mismatch", aten.clone's
# "unprocessed parameters" for a memory format)
_CONVERSION = ("ge_converter", "converter", "AscendIR", "data type mismatch", "unprocessed parameters")
# TorchAir's words for inputs of two dtypes, with its numbers (GE's DataType enum, and eq's converter
# prints one input's twice): the names are in airctl's graph
_MISMATCH = re.compile(r"data type mismatch \S+ vs\. \S+")


def dtype_words(message: str, graph: Any, node: Any) -> str:
    """``message`` with TorchAir's "data type mismatch 12 vs. 12" said with the dtypes airctl's graph
    records for the failing node's inputs ("data type mismatch: int64 vs bool")."""
    from airctl.verify.converter_coverage import input_dtype, resolve_target, same_dtype_inputs

    if node is None or not _MISMATCH.search(message):
        return message
    target = resolve_target(node.op)
    pair = same_dtype_inputs(target) if target is not None else None
    dtypes = [input_dtype(graph, node, i) for i in (pair or (0, 1))]
    if not all(dtypes):
        return message
    return _MISMATCH.sub(f"data type mismatch: {dtypes[0]} vs {dtypes[1]} (inputs of {node.name}, {node.op})",
                         message, count=1)


def _where(source: str | None) -> dict[str, Any]:
    if not source or ":" not in source:
        return {}
    file, line = split_source(source)
    return {"file": file, "line": line}


def unconvertible_error(found: list, prefix: str = "TorchAir cannot convert the graph to GE", stopped: str = "",
                        prior_hint: str | None = None) -> UnconvertibleOps:
    """The error for ``found`` (:class:`~airctl.verify.converter_coverage.Unconvertible` records); ``stopped``:
    TorchAir's own message where it stopped, ``prior_hint``: a hint already made for that message (custom-op IR)."""
    from airctl.verify.converter_coverage import summary

    first = found[0]
    fixes: dict[str, list[str]] = {}  # workaround -> the ops it is for
    for u in found:
        if u.workaround:
            fixes.setdefault(u.workaround, []).append(u.op.rsplit(".", 1)[0])
    own = f"{prior_hint} " if prior_hint and "register_fx_node_ge_converter" not in prior_hint else ""
    known = own + "".join(f"{', '.join(ops)}: {fix}. " for fix, ops in fixes.items())
    hint = known + ("Otherwise: r" if known else "R") + (  # no "Otherwise:" with nothing before it
        "ewrite these ops with supported ones, register converters with "
        "torchair.register_fx_node_ge_converter, or compile with --mode reduce-overhead (no GE conversion); "
        "`airctl compile ... --json` lists them under error_detail.unconvertible")
    message = f"{prefix}: {summary(found)}" + (f". TorchAir stopped at: {stopped}" if stopped else "")
    return UnconvertibleOps(message, [u.to_json() for u in found], node=first.nodes[0], hint=hint,
                            **_where(first.source))


def converter_error(session: Any, ledger: Any, message: str, failed_node: str | None = None,
                    hint: str | None = None) -> AirctlError | None:
    """An :class:`~airctl.errors.UnconvertibleOps` for a conversion failure, or None. ``failed_node``: the
    node TorchAir stopped at, listed too when its converter failed in a way not predicted statically."""
    if session is None or session.current is None or not any(w in message for w in _CONVERSION):
        return None
    stage = ledger.last_stage(session.current, "fx")
    if stage is None:
        return None
    try:
        graph = ledger.stage_graph(stage)
    except (AirctlError, OSError):
        return None
    from airctl.verify.converter_coverage import Unconvertible, unconvertible_ops, workaround

    found = unconvertible_ops(graph)
    failed = next((n for n in graph.nodes if n.name == failed_node), None)
    message = dtype_words(message, graph, failed)
    if not found:
        return None  # only the op TorchAir stopped at: its own error (and hints, custom-op IR ones) says it best
    if failed is not None and all(failed.name not in u.nodes for u in found):
        first_line = message.splitlines()[0] if message else "its converter failed"
        found.insert(0, Unconvertible(failed.op, "converter fails", first_line, [failed.name], failed.source,
                                      workaround(failed.op, failed.source, failed.module)))
    return unconvertible_error(found, stopped=message.splitlines()[0] if message else "", prior_hint=hint)

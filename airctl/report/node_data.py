"""What the report keeps of each node of a snapshot: its details (what the details panel shows beyond
name, op and stream, bounded: a tensor constant's attribute can be megabytes) and its edges as
union indices, plus the numbering of ops and streams. Called once per node of every snapshot, so
the common cases come first and the loops stay in C where they can (:mod:`airctl.report.payload`)."""

from __future__ import annotations

import math
from typing import Any

from airctl.graph.model import Graph, Node, is_stream_op
from airctl.graph.refs import Refs
from airctl.io.json_io import non_finite_text

MAX_TEXT = 2000  # characters of one attribute string kept in the report (tensor constants can be huge)
MAX_ITEMS = 200  # items of one list/dict kept


def _clip(value: Any, depth: int = 0) -> Any:
    """Bound what one attribute costs the page; the ledger snapshot keeps the full value. JSON has
    no NaN or infinities (a float constant may be one): they become ``"NaN"``, ``"Infinity"``,
    ``"-Infinity"``. (Called for every attribute of every node: the common types are tested first.)"""
    kind = type(value)
    if kind is int or kind is bool or value is None:
        return value
    if kind is str:
        return value if len(value) <= MAX_TEXT else f"{value[:MAX_TEXT]}… ({len(value)} characters)"
    if kind is float:
        if math.isfinite(value):
            return value
        return non_finite_text(value)
    if kind is list or kind is tuple:
        if depth > 6:
            return "[…]"
        items = [_clip(v, depth + 1) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"… ({len(value)} items)")
        return items
    if kind is dict:
        if depth > 6:
            return "{…}"
        out = {str(k): _clip(v, depth + 1) for k, v in list(value.items())[:MAX_ITEMS]}
        if len(value) > MAX_ITEMS:
            out["…"] = f"{len(value)} keys"
        return out
    if isinstance(value, (str, int, float, list, tuple, dict)):  # subclasses: as their base
        base = next(t for t in (bool, int, float, str, list, tuple, dict) if isinstance(value, t))
        return _clip(base(value), depth)
    return value


def detail(node: Node) -> dict[str, Any] | list[str]:
    """What the details panel shows of a node beyond its name, op and stream. A plain op (kind
    ``op``, inputs and nothing else: most of a GE graph) is just its input list, which the viewer
    reads as ``{"kind": "op", "inputs": [...]}``: no dict made per node, an eighth less JSON (a 50k-node
    report's payload: 13.9 MB, not 15.9)."""
    if (node.kind == "op" and not node.control_inputs and not node.attrs and not node.source and not node.module
            and not node.meta and len(node.inputs) <= MAX_ITEMS):
        return node.inputs
    out: dict[str, Any] = {"kind": node.kind}
    if node.inputs:
        out["inputs"] = node.inputs if len(node.inputs) <= MAX_ITEMS else _clip(node.inputs)
    if node.control_inputs:
        out["control_inputs"] = node.control_inputs
    if node.attrs:
        out["attrs"] = _clip(node.attrs)
    if node.source:
        out["source"] = node.source
    if node.module:
        out["module"] = node.module
    if node.meta:
        out["meta"] = _clip(node.meta)
    return out


def snapshot_edges(graph: Graph, positions: list[int]) -> dict[str, list[int]]:
    """Data/control/sync edges as flat [src, dst, ...] union indices (``positions``: per node); the same
    rules as :meth:`Graph.edges`, with each distinct input reference resolved once (the graph's
    :class:`Refs`, shared with the other readers of the snapshot)."""
    data_in, ctrl_in = Refs.of(graph).inputs(graph)
    ops = {n.op for n in graph.nodes}  # each distinct op tested once
    record_ops = {op for op in ops if is_stream_op(op, "record")}
    wait_ops = {op for op in ops if is_stream_op(op, "wait")}
    record = {i for i, n in enumerate(graph.nodes) if n.op in record_ops} if record_ops else set()
    wait = {i for i, n in enumerate(graph.nodes) if n.op in wait_ops} if wait_ops else set()
    data: list[int] = []
    control: list[int] = []
    sync: list[int] = []
    for i, (ins, d) in enumerate(zip(data_in, positions, strict=True)):
        if ins:
            if i in wait:
                for s in ins:
                    if s >= 0:
                        (sync if s in record else data).extend((positions[s], d))
            else:
                for s in ins:
                    if s >= 0:
                        data.extend((positions[s], d))
        if ctrl_in[i]:
            for s in ctrl_in[i]:
                if s >= 0:
                    control.extend((positions[s], d))
    return {"data": data, "control": control, "sync": sync}


def numbered(values: list[Any], table: dict[Any, int]) -> list[int]:
    """Each value's number in ``table`` (new values numbered in order of first appearance, as
    ``table.setdefault(v, len(table))`` would), with the per-node lookups in C."""
    for value in dict.fromkeys(values):
        table.setdefault(value, len(table))
    return list(map(table.__getitem__, values))

"""Where TorchAir's FX stream ops sit in program order, and whether a pair of them moved.

``air.record``/``air.wait``/``air.scope_enter``/``air.scope_exit`` carry no data edge to the ops
they order: a record stands after the op whose work it records, a wait and a scope entry before
the op that waits or enters, a scope exit after the last op of the scope. So two graphs can have
the same nodes and edges and still order their streams differently (a pass file that waits
before ``add`` instead of before ``sub``). For each paired stream op, the op it stands next to
(the nearest node in that direction that is not a stream op) is compared through the matching;
when it differs the pair is changed, with ``place``: ``{"old": "before sub", "new": "before add"}``.
"""

from __future__ import annotations

from typing import Any

from airctl.diff.match import Matching
from airctl.graph.model import Graph, is_stream_op

SIDE = {"record": "after", "scope_exit": "after", "wait": "before", "scope_enter": "before"}


def _side(op: str) -> str | None:
    """Where a stream op stands (npugraph_ex's copies where TorchAir's do); None for any other op."""
    return next((side for name, side in SIDE.items() if is_stream_op(op, name)), None)


def _neighbours(graph: Graph, direction: str) -> dict[str, str | None]:
    """Each stream op's nearest other node before (``after``) or after (``before``) it in file order."""
    out: dict[str, str | None] = {}
    last: str | None = None
    nodes = graph.nodes if direction == "after" else list(reversed(graph.nodes))
    for node in nodes:
        side = _side(node.op)
        if side is None:
            last = node.name
        elif side == direction:
            out[node.name] = last
    return out


def place_changes(a: Graph, b: Graph, matching: Matching) -> dict[str, dict[str, Any]]:
    """a-side name -> ``{"old", "new"}`` for the paired stream ops that stand next to another op (the
    matching's names, built on first use, are read only when ``a`` has such ops)."""
    if not any(map(_side, {node.op for node in a.nodes})):
        return {}
    a_to_b = matching.a_to_b
    out: dict[str, dict[str, Any]] = {}
    for direction in ("after", "before"):
        near_a, near_b = _neighbours(a, direction), _neighbours(b, direction)
        for name, op_a in near_a.items():
            peer = a_to_b.get(name)
            if peer is None or peer not in near_b:
                continue
            op_b = near_b[peer]
            if (a_to_b.get(op_a) if op_a is not None else None) != op_b:
                out[name] = {"old": f"{direction} {op_a}", "new": f"{direction} {op_b}"}
    return out

"""Link AOT's FX nodes to the Dynamo nodes they were traced from, for a node's origin chain.

A ledger's ``dynamo`` snapshot names nodes as Dynamo does (``x_3``, ``torch.mm``) and AOT's as the
aten graph does (``mm_3``, ``aten.mm.default``); neither snapshot keeps the other's name. Both keep
the user's source line and module path, and tracing keeps program order, so within one
(source line, module) the k-th node of an op is the k-th of the same op on the other side. Where
the counts differ (a decomposition: ``linear`` became ``t`` and ``addmm``) the link is every Dynamo
node of that line and module, and says so.

>>> from airctl.graph.model import Graph, Node
>>> d = Graph("d", "fx", [Node("x", "torch.mm", source="m.py:3", kind="call_function"),
...                       Node("x_1", "torch.mm", source="m.py:3", kind="call_function")])
>>> a = Graph("a", "fx", [Node("mm", "aten.mm.default", source="m.py:3", kind="call_function"),
...                       Node("mm_1", "aten.mm.default", source="m.py:3", kind="call_function")])
>>> dynamo_of(d, a, "mm_1")["nodes"], aot_nodes_of(d, a, "x")
(['x_1'], ['mm'])
"""

from __future__ import annotations

from typing import Any

from airctl.graph.model import Graph, Node

_CALLS = ("call_function", "call_method", "call_module")


def op_base(op: str) -> str:
    """``aten.mm.default`` and ``torch.mm`` -> ``mm``; ``torch.nn.functional.relu`` -> ``relu``;
    ``add`` (an operator) -> ``add``; the trailing ``_`` of in-place ops dropped."""
    parts = op.split(".")
    base = parts[1] if parts[0] == "aten" and len(parts) >= 2 else parts[-1]
    return base.rstrip("_") or base


Lines = dict[tuple[str | None, str | None], list[Node]]


def call_lines(graph: Graph) -> Lines:
    """The graph's calls with a source line, grouped by (source line, module), in graph order."""
    index: Lines = {}
    for n in graph.nodes:
        if n.kind in _CALLS and n.source:
            index.setdefault((n.source, n.module), []).append(n)
    return index


def _group(graph: Graph, source: str | None, module: str | None, lines: Lines | None = None) -> list[Node]:
    """The calls of ``source`` (a line) and ``module``; ``lines``: the graph's :func:`call_lines`, made once
    by the caller (chain_graphs.Snapshots.lines)."""
    return (lines if lines is not None else call_lines(graph)).get((source, module), [])


def dynamo_of(dynamo: Graph, aot: Graph, name: str,
              lines: tuple[Lines, Lines] | None = None) -> dict[str, Any] | None:
    """The Dynamo node(s) AOT's node ``name`` came from: ``{"nodes", "op", "how"}``, or None
    without a source line to link by; ``lines``: both graphs' calls by (source, module), when the
    caller asks for many nodes."""
    node = aot.get(name)
    if node is None or not node.source:
        return None
    theirs = _group(dynamo, node.source, node.module, lines and lines[0])
    if not theirs:
        return None
    base = op_base(node.op)
    ours = [n.name for n in _group(aot, node.source, node.module, lines and lines[1]) if op_base(n.op) == base]
    same = [n for n in theirs if op_base(n.op) == base]
    if same and len(same) == len(ours):
        hit = same[ours.index(name)]
        return {"nodes": [hit.name], "op": hit.op, "how": "source line, module and order"}
    return {"nodes": [n.name for n in theirs], "op": None,
            "how": "source line and module (the op was decomposed: every Dynamo node of that line)"}


def aot_nodes_of(dynamo: Graph, aot: Graph, name: str) -> list[str]:
    """The AOT nodes Dynamo's node ``name`` became (the inverse of :func:`dynamo_of`)."""
    node = dynamo.get(name)
    if node is None or not node.source:
        return []
    ours = _group(aot, node.source, node.module)
    base = op_base(node.op)
    theirs = [n.name for n in _group(dynamo, node.source, node.module) if op_base(n.op) == base]
    same = [n.name for n in ours if op_base(n.op) == base]
    if same and len(same) == len(theirs):
        return [same[theirs.index(name)]]
    return [n.name for n in ours]

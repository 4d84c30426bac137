"""What changed between two graphs, as one dataclass with a stable ``to_json()`` (docs/diff.md).

Built from a :class:`~airctl.diff.match.Matching`: unmatched nodes of ``a`` are *removed*, of
``b`` *added*; a matched pair is *changed* when its op, stream or attributes differ or its
inputs were reordered. A rename alone is not a change (GE and FX renumber freely); renames are
listed separately. Edges (data, control, sync) are compared through the matching as multisets,
named by their endpoints in the graph they belong to (``b`` for added, ``a`` for removed).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from airctl.diff.match import Matching, match_graphs
from airctl.graph.model import Graph, Node
from airctl.io.gc_pause import gc_paused

_MISSING = object()


@dataclass
class NodeChange:
    name: str  # in b
    old_name: str  # in a
    op: str
    old_op: str
    changes: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "old_name": self.old_name, "op": self.op, "old_op": self.old_op,
                "changes": self.changes}


@dataclass
class DiffReport:
    a_name: str
    b_name: str
    a_nodes: int
    b_nodes: int
    added: list[Node] = field(default_factory=list)
    removed: list[Node] = field(default_factory=list)
    changed: list[NodeChange] = field(default_factory=list)
    edges_added: list[tuple[str, str, str]] = field(default_factory=list)
    edges_removed: list[tuple[str, str, str]] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    matched_by: dict[str, int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.edges_added or self.edges_removed)

    def summary(self) -> dict[str, int]:
        return {"added": len(self.added), "removed": len(self.removed), "changed": len(self.changed),
                "edges_added": len(self.edges_added), "edges_removed": len(self.edges_removed),
                "renamed": len(self.renamed)}

    def to_json(self) -> dict[str, Any]:
        def node(n: Node) -> dict[str, Any]:
            return {"name": n.name, "op": n.op, "stream": n.stream}

        def edge(e: tuple[str, str, str]) -> dict[str, str]:
            return {"src": e[0], "dst": e[1], "kind": e[2]}

        return {
            "a": {"name": self.a_name, "nodes": self.a_nodes},
            "b": {"name": self.b_name, "nodes": self.b_nodes},
            "summary": self.summary(),
            "added": [node(n) for n in self.added],
            "removed": [node(n) for n in self.removed],
            "changed": [c.to_json() for c in self.changed],
            "edges_added": [edge(e) for e in self.edges_added],
            "edges_removed": [edge(e) for e in self.edges_removed],
            "renamed": [{"from": a, "to": b} for a, b in self.renamed],
            "matched_by": self.matched_by,
        }


def _rename_refs(value: Any, names: dict[str, str]) -> Any:
    """FX attrs name their inputs as ``"%mm"``; rewrite those through the matching before comparing."""
    if isinstance(value, str):
        if value.startswith("%") and value[1:] in names:
            return "%" + names[value[1:]]
        return value
    if isinstance(value, list):
        return [_rename_refs(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _rename_refs(v, names) for k, v in value.items()}
    return value


def _attr_changes(a: Node, b: Node, names: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in sorted(set(a.attrs) | set(b.attrs)):
        old = a.attrs.get(key, _MISSING)
        new = b.attrs.get(key, _MISSING)
        if old == new:
            continue
        if old is not _MISSING:
            old = _rename_refs(old, names)
        if old != new:
            out[key] = {"old": None if old is _MISSING else old, "new": None if new is _MISSING else new}
    return out


def _node_change(a: Node, b: Node, names: dict[str, str], mapped: list[str | None], actual: list[str]
                 ) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if a.op != b.op:
        changes["op"] = {"old": a.op, "new": b.op}
    if a.stream != b.stream:
        changes["stream"] = {"old": a.stream, "new": b.stream}
    if a.attrs != b.attrs:
        attrs = _attr_changes(a, b, names)
        if attrs:
            changes["attrs"] = attrs
    if mapped != actual and None not in mapped and Counter(mapped) == Counter(actual):
        changes["inputs_reordered"] = {"old": mapped, "new": actual}
    return changes


def _edges(graph: Graph, side: Any) -> Counter[tuple[str, str, str]]:
    """Same edges as :meth:`Graph.edges`, from the matcher's resolved inputs when it has them."""
    if side is None:
        return Counter((e.src, e.dst, e.kind) for e in graph.edges())
    nodes = graph.nodes
    out: Counter[tuple[str, str, str]] = Counter()
    for i, node in enumerate(nodes):
        is_wait = node.op.startswith("air.wait")
        for p in side.data_in[i]:
            if p >= 0:
                kind = "sync" if is_wait and nodes[p].op.startswith("air.record") else "data"
                out[(nodes[p].name, node.name, kind)] += 1
        for p in side.ctrl_in[i]:
            if p >= 0:
                out[(nodes[p].name, node.name, "control")] += 1
    return out


def build_report(a: Graph, b: Graph, matching: Matching) -> DiffReport:
    names = matching.a_to_b
    back = matching.b_to_a
    report = DiffReport(a.name, b.name, len(a), len(b))
    report.removed = [n for n in a.nodes if n.name not in names]
    report.added = [n for n in b.nodes if n.name not in back]
    b_index = {n.name: n for n in b.nodes}
    side_a, side_b = matching.sides or (None, None)
    for i, node in enumerate(a.nodes):
        other = names.get(node.name)
        if other is None:
            continue
        if other != node.name:
            report.renamed.append((node.name, other))
        peer = b_index[other]
        if side_a is not None and side_b is not None:
            j = side_a.pair[i]
            mapped = [b.nodes[side_a.pair[p]].name if p >= 0 and side_a.pair[p] >= 0 else None
                      for p in side_a.data_in[i]]
            actual = [b.nodes[q].name if q >= 0 else None for q in side_b.data_in[j]]
        else:
            mapped = [names.get(Node.producer(r)) for r in node.inputs]
            actual = [Node.producer(r) for r in peer.inputs]
        changes = _node_change(node, peer, names, mapped, actual)
        if changes:
            report.changed.append(NodeChange(other, node.name, peer.op, node.op, changes))
    edges_a = _edges(a, side_a)
    edges_b = _edges(b, side_b)
    mapped_a: Counter[tuple[str, str, str]] = Counter()
    for (src, dst, kind), count in edges_a.items():
        if src in names and dst in names:
            mapped_a[(names[src], names[dst], kind)] += count
    for (src, dst, kind), count in edges_a.items():
        if src in names and dst in names:
            extra = count - edges_b.get((names[src], names[dst], kind), 0)
        else:
            extra = count
        report.edges_removed += [(src, dst, kind)] * max(extra, 0)
    for (src, dst, kind), count in edges_b.items():
        extra = count - mapped_a.get((src, dst, kind), 0)
        report.edges_added += [(src, dst, kind)] * max(extra, 0)
    report.matched_by = dict(Counter(matching.how.values()))
    return report


def diff_graphs(a: Graph, b: Graph) -> DiffReport:
    """Match ``a`` against ``b`` and report what changed from ``a`` to ``b``."""
    with gc_paused():
        return build_report(a, b, match_graphs(a, b))

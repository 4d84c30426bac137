"""What changed between two graphs, as one dataclass with a stable ``to_json()`` (docs/diff.md).

Built from a :class:`~airctl.diff.match.Matching`: unmatched nodes of ``a`` are *removed*, of
``b`` *added*; a matched pair is *changed* when its op, stream or attributes differ or its
inputs were reordered. A rename alone is not a change (GE and FX renumber freely); renames are
listed separately. Edges (data, control, sync) are compared through the matching as multisets,
named by their endpoints in the graph they belong to (``b`` for added, ``a`` for removed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from airctl.diff.match import Matching, match_graphs
from airctl.diff.places import place_changes
from airctl.diff.sides import Sides
from airctl.graph.model import Graph, Node, is_stream_op
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


def _map_refs(value: Any, ref: Callable[[str], str]) -> Any:
    """``value`` with every input reference in it (FX attrs name their inputs as ``"%mm"``) replaced by
    ``ref`` of the name it holds (``"mm"``), in its lists and dicts too."""
    if isinstance(value, str):
        return ref(value[1:]) if value.startswith("%") else value
    if isinstance(value, list):
        return [_map_refs(v, ref) for v in value]
    if isinstance(value, dict):
        return {k: _map_refs(v, ref) for k, v in value.items()}
    return value


def _masked(_name: str) -> str:
    """Any input reference, as :func:`_map_refs` masks it for a comparison: ``"%"``."""
    return "%"


def _attr_changes(a: Node, b: Node, names: Mapping[str, str]) -> dict[str, Any]:
    """Attributes that differ. Which node an FX arg (``"%mm"``) names is not compared: the data
    edges say that (an inserted node is an added node and its edges, not an attribute change of
    its user too)."""
    out: dict[str, Any] = {}
    for key in sorted(set(a.attrs) | set(b.attrs)):
        old = a.attrs.get(key, _MISSING)
        new = b.attrs.get(key, _MISSING)
        if old == new or (old is not _MISSING and new is not _MISSING
                          and _map_refs(old, _masked) == _map_refs(new, _masked)):
            continue
        if old is not _MISSING:  # its references through the matching, so that they read as b's names
            old = _map_refs(old, lambda name: "%" + names.get(name, name))
        out[key] = {"old": None if old is _MISSING else old, "new": None if new is _MISSING else new}
    return out


def _value_changes(a: Node, b: Node, names: Mapping[str, str]) -> dict[str, Any]:
    """Op, stream and attribute changes of a matched pair (inputs are compared by the callers)."""
    changes: dict[str, Any] = {}
    if a.op != b.op:
        changes["op"] = {"old": a.op, "new": b.op}
    if a.stream != b.stream:
        changes["stream"] = {"old": a.stream, "new": b.stream}
    if a.attrs != b.attrs:
        attrs = _attr_changes(a, b, names)
        if attrs:
            changes["attrs"] = attrs
    return changes


def _node_change(a: Node, b: Node, names: dict[str, str], mapped: list[str | None], actual: list[str]
                 ) -> dict[str, Any]:
    changes = _value_changes(a, b, names)
    if mapped != actual and None not in mapped and Counter(mapped) == Counter(actual):
        changes["inputs_reordered"] = {"old": mapped, "new": actual}
    return changes


def _edges(graph: Graph) -> Counter[tuple[str, str, str]]:
    return Counter((e.src, e.dst, e.kind) for e in graph.edges())


def build_report(a: Graph, b: Graph, matching: Matching) -> DiffReport:
    side_a, side_b = matching.sides or (None, None)
    if side_a is not None and side_b is not None and len(side_a.index) == side_a.n \
            and len(side_b.index) == side_b.n and side_a.nodes is a.nodes and side_b.nodes is b.nodes:
        report = _build_indexed(a, b, matching, side_a, side_b)
    else:
        report = _build_by_name(a, b, matching)
    _add_places(report, a, b, matching)
    return report


def _add_places(report: DiffReport, a: Graph, b: Graph, matching: Matching) -> None:
    """FX stream ops that moved (:mod:`airctl.diff.places`) are changed too."""
    places = place_changes(a, b, matching)
    if not places:
        return
    listed = {c.old_name: c for c in report.changed}
    a_nodes, b_nodes = {n.name: n for n in a.nodes}, {n.name: n for n in b.nodes}
    for name, place in places.items():
        if name not in listed:
            peer = b_nodes[matching.a_to_b[name]]
            listed[name] = NodeChange(peer.name, name, peer.op, a_nodes[name].op, {})
            report.changed.append(listed[name])
        listed[name].changes["place"] = place
    order = {name: k for k, name in enumerate(a_nodes)}
    report.changed.sort(key=lambda c: order[c.old_name])


def _build_by_name(a: Graph, b: Graph, matching: Matching) -> DiffReport:
    """The report from node names alone (a matching without the matcher's arrays, or duplicate names)."""
    names = matching.a_to_b
    back = matching.b_to_a
    report = DiffReport(a.name, b.name, len(a), len(b))
    report.removed = [n for n in a.nodes if n.name not in names]
    report.added = [n for n in b.nodes if n.name not in back]
    b_index = {n.name: n for n in b.nodes}
    for node in a.nodes:
        other = names.get(node.name)
        if other is None:
            continue
        if other != node.name:
            report.renamed.append((node.name, other))
        peer = b_index[other]
        mapped = [names.get(Node.producer(r)) for r in node.inputs]
        actual = [Node.producer(r) for r in peer.inputs]
        changes = _node_change(node, peer, names, mapped, actual)
        if changes:
            report.changed.append(NodeChange(other, node.name, peer.op, node.op, changes))
    edges_a = _edges(a)
    edges_b = _edges(b)
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
    report.matched_by = matching.rule_counts()
    return report


class _Names(Mapping[str, str]):
    """The matching's a -> b names for :func:`_map_refs`, built on first use: only an FX argument
    naming an input (``"%mm"``) in a changed attribute reads them (50k nodes: tens of ms otherwise)."""

    def __init__(self, matching: Matching) -> None:
        self._matching = matching

    def __getitem__(self, name: str) -> str:
        return self._matching.a_to_b[name]

    def __contains__(self, name: object) -> bool:
        return name in self._matching.a_to_b

    def __iter__(self) -> Iterator[str]:
        return iter(self._matching.a_to_b)

    def __len__(self) -> int:
        return len(self._matching.a_to_b)


def _in_edges(side: Any, i: int, is_wait: bool, is_record: list[bool]) -> list[tuple[int, str]]:
    """Node ``i``'s incoming edges as (producer index, kind), in :meth:`Graph.edges` order."""
    out = [(p, "sync" if is_wait and is_record[p] else "data") for p in side.data_in[i] if p >= 0]
    out += [(p, "control") for p in side.ctrl_in[i] if p >= 0]
    return out


def _mapped_equal(ins_a: list[int], ins_b: list[int], pa_ext: list[int]) -> bool:
    mapped = [pa_ext[p] for p in ins_a]
    return mapped == ins_b and -1 not in mapped


def _of_ops(side: Any, prefix: str) -> list[bool]:
    """Per node of ``side``: is its op a stream op (air or npugraph_ex) named ``prefix``...? (ops are interned ints)"""
    wanted = {k for op, k in side.ops.items() if is_stream_op(op, prefix)}
    if not wanted:
        return [False] * side.n
    return [k in wanted for k in side.op]


def _build_indexed(a: Graph, b: Graph, matching: Matching, side_a: Any, side_b: Any) -> DiffReport:
    """The same report as :func:`_build_by_name`, from the matcher's index arrays (names are unique).

    An edge's destination fixes the node it is listed under, so edges are compared node by node: a
    matched pair whose inputs map one to one (the common case) has no edge changes at all, and only
    the others count their incoming edges as multisets.
    """
    names = _Names(matching)
    a_nodes, b_nodes = a.nodes, b.nodes
    pa, pb = side_a.pair, side_b.pair
    pa_ext = pa + [-2]  # a dangling input (-1) maps to -2, which no b input equals
    report = DiffReport(a.name, b.name, len(a), len(b))
    report.removed = [a_nodes[i] for i in range(side_a.n) if pa[i] < 0]
    report.added = [b_nodes[j] for j in range(side_b.n) if pb[j] < 0]
    wait_a, wait_b = _of_ops(side_a, "wait"), _of_ops(side_b, "wait")
    record_a, record_b = _of_ops(side_a, "record"), _of_ops(side_b, "record")
    data_a, data_b, ctrl_a, ctrl_b = side_a.data_in, side_b.data_in, side_a.ctrl_in, side_b.ctrl_in
    same_edges = [False] * side_a.n  # matched pairs whose incoming edges correspond exactly
    renamed, changed, removed_edges = report.renamed, report.changed, report.edges_removed
    for i, node in enumerate(a_nodes):
        j = pa[i]
        if j < 0:
            for (p, kind), count in Counter(_in_edges(side_a, i, wait_a[i], record_a)).items():
                removed_edges += [(a_nodes[p].name, node.name, kind)] * count
            continue
        peer = b_nodes[j]
        if peer.name != node.name:
            renamed.append((node.name, peer.name))
        ins_a, ins_b = data_a[i], data_b[j]
        mapped = list(map(pa_ext.__getitem__, ins_a))
        reordered = None
        if mapped == ins_b:
            ca, cb = ctrl_a[i], ctrl_b[j]
            # equal lists without -1 (an unmatched producer): every input edge has its counterpart
            same_edges[i] = -1 not in mapped and not wait_a[i] and not wait_b[j] and (
                ca == cb == [] or _mapped_equal(ca, cb, pa_ext))
        elif min(mapped, default=0) >= 0 and sorted(mapped) == sorted(ins_b):
            reordered = {"old": [b_nodes[q].name for q in mapped], "new": [b_nodes[q].name for q in ins_b]}
        if node.op != peer.op or node.stream != peer.stream or node.attrs != peer.attrs:
            changes = _value_changes(node, peer, names)
        else:
            changes = {}
        if reordered is not None:
            changes["inputs_reordered"] = reordered
        if changes:
            changed.append(NodeChange(peer.name, node.name, peer.op, node.op, changes))
        if not same_edges[i]:
            in_b = Counter(_in_edges(side_b, j, wait_b[j], record_b))
            in_a = _in_edges(side_a, i, wait_a[i], record_a)
            for (p, kind), count in Counter(in_a).items():
                q = pa[p]
                extra = count - in_b.get((q, kind), 0) if q >= 0 else count
                removed_edges += [(a_nodes[p].name, node.name, kind)] * max(extra, 0)
    added_edges = report.edges_added
    for j, peer in enumerate(b_nodes):
        i = pb[j]
        if i >= 0 and same_edges[i]:
            continue
        in_b = _in_edges(side_b, j, wait_b[j], record_b)
        if not in_b:
            continue
        in_a = Counter(_in_edges(side_a, i, wait_a[i], record_a)) if i >= 0 else Counter()
        for (q, kind), count in Counter(in_b).items():
            p = pb[q]
            extra = count - in_a.get((p, kind), 0) if p >= 0 and i >= 0 else count
            added_edges += [(b_nodes[q].name, peer.name, kind)] * max(extra, 0)
    report.matched_by = matching.rule_counts()
    return report


def diff_graphs(a: Graph, b: Graph, sides: Sides | None = None) -> DiffReport:
    """Match ``a`` against ``b`` and report what changed from ``a`` to ``b``; ``sides``
    (:class:`~airctl.diff.sides.Sides`): kept across a chain of diffs (a, b), (b, c)..., so that each
    graph's arrays are built once."""
    with gc_paused():
        return build_report(a, b, match_graphs(a, b, sides))

"""The data the HTML viewer draws: every stage of every graph, laid out once per graph and dialect.

Stepping through passes should not make the picture jump, so the stages of one graph that share
a dialect form a *group* with one layout over the union of their nodes; a node keeps its place
in every stage. A node's place is its identity, followed through renames with the structural
diff (:func:`airctl.diff.diff_graphs`): ``Add_1`` in one stage and the ``Add_2`` it was matched to
in the next share a place. Each stage also carries its diff against the previous stage
(added/removed/changed nodes, added/removed edges), which the viewer highlights.

Scope, record and wait nodes are tied to the ops around them by *order* edges
(:mod:`airctl.render.order`), which the layout ranks by, and the layout gives each stream its own
column (a node's stream in the latest stage that has it), so a stream scope can be drawn as a band.
Each snapshot also carries its lane view (:mod:`airctl.report.lanes_data`), with the verifier's
findings for that snapshot marked.

Layout of the JSON (compact: per-node values are parallel integer arrays)::

    group:    {dialect, keys[], x[], y[], ops[], streams[], details[], snapshots[]}
    details:  per distinct node body, {kind, inputs[], control_inputs[], attrs{}, source, module, meta{}},
              or only its inputs[] for a plain op (kind "op", nothing else)
    snapshot: {nodes[] (union index), names{pos: name} (where not the key), op[], stream[], det[],
               edges: {data: [src, dst, ...], control: [...], sync: [...], order: [...]}, lanes: {...}}
    stage:    {index, name, changed, nodes, node_delta, seconds, group, snap, diff}
    diff:     {added[], removed[], changed: [[u, "op,stream,attrs"]...], summary{}, edges_added/removed: [[s, d, kind]]}
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from itertools import compress, count
from typing import Any

from airctl.diff import DiffReport, diff_graphs
from airctl.diff.sides import Sides
from airctl.graph.model import Graph, Node
from airctl.graph.refs import Refs, pinned
from airctl.modes import Mode
from airctl.render.layout import layered_layout
from airctl.render.style import stream_fills
from airctl.report.ahead import Ahead, snapshot_extras
from airctl.report.node_data import detail, numbered, snapshot_edges

MAX_DIFF_EDGES = 5000  # highlighted edges per stage; the summary keeps the full counts
NODE_W = 150.0


def empty_diff() -> dict[str, Any]:
    """A stage's diff that lists nothing (a stage whose snapshot is the previous one's, or a lone graph's
    before the caller marks its nodes)."""
    return {"added": [], "removed": [], "changed": [], "edges_added": [], "edges_removed": [],
            "summary": {"added": 0, "removed": 0, "changed": 0, "edges_added": 0, "edges_removed": 0, "renamed": 0}}


@dataclass
class Group:
    """The stages of one graph in one dialect, sharing one layout."""

    graph_id: str
    dialect: str
    mode: Mode = Mode.MAX_AUTOTUNE  # the run's mode: the semantics of the lane view and its findings
    ahead: Ahead | None = None  # lane views and program orders worked out in a child (report/ahead.py)
    keys: list[str] = field(default_factory=list)
    key_index: dict[str, int] = field(default_factory=dict)
    edges: set[tuple[int, int]] = field(default_factory=set)
    ops: dict[str, int] = field(default_factory=dict)
    streams: dict[str | None, int] = field(default_factory=dict)
    details: list[dict[str, Any] | list[str]] = field(default_factory=list)
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    pull: set[int] = field(default_factory=set)  # union indices laid out right above their successor
    column: dict[int, str | None] = field(default_factory=dict)  # union index -> stream (latest stage)
    _prev: Graph | None = None
    _prev_u: dict[str, int] = field(default_factory=dict)  # name in the previous snapshot -> union index
    _prev_det: dict[int, tuple[Node, int]] = field(default_factory=dict)
    _prev_refs: Refs | None = None  # the previous snapshot's reference table
    _sides: Sides = field(default_factory=Sides)  # the diff arrays of the last two snapshots
    _unsettled: list[tuple[dict[str, Any], list[int], Graph, str | None]] = field(default_factory=list)
    # FX groups: (previous snapshot file, snapshot file) -> the matched node names, which the
    # provenance's chains read instead of matching the two again (report/provenance_data.py)
    pairs: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    _prev_key: str | None = None
    _report: DiffReport | None = None

    def _slot(self, name: str, used: set[int]) -> int:
        u = self.key_index.get(name)
        if u is not None and u not in used:
            return u
        key, k = name, 1
        while key in self.key_index:
            k += 1
            key = f"{name}#{k}"
        u = self.key_index[key] = len(self.keys)
        self.keys.append(key)
        return u

    def add(self, graph: Graph, report: DiffReport | None = None,
            key: str | None = None) -> tuple[int, dict[str, Any] | None]:
        """Add a snapshot; returns its index and its diff against the previous snapshot (None for the first).
        Its reference table is built once (:func:`pinned`) for every reader of it here (edges, program
        order, lane view, verifier, diff), and its diff arrays serve its diff with the next snapshot too.
        ``key``: the snapshot's file, when :attr:`ahead` works out its lane view and program order."""
        prev, prev_key = self._prev, self._prev_key
        with pinned(graph) as refs:
            out = self._add(graph, report, key if self.ahead is not None else None)
        self._prev_refs = refs
        report_made = self._report
        if self.dialect == "fx" and key is not None and prev_key is not None and prev is not None and report_made:
            removed = {n.name for n in report_made.removed}
            renamed = dict(report_made.renamed)
            self.pairs[(prev_key, key)] = {n.name: renamed.get(n.name, n.name) for n in prev.nodes
                                           if n.name not in removed}
        self._prev_key, self._report = key, None
        return out

    def _add(self, graph: Graph, report: DiffReport | None, key: str | None) -> tuple[int, dict[str, Any] | None]:
        prev = self._prev
        if prev is not None and report is None:
            with pinned(prev, self._prev_refs):
                report = diff_graphs(prev, graph, self._sides)
        self._report = report
        cur_u: dict[str, int] = {}
        used: set[int] = set()
        later: list[Node] = []
        names = [n.name for n in graph.nodes]
        first = {} if self.keys else dict(zip(names, count()))
        if first and len(first) == len(names):  # the group's first snapshot, names unique: a place per name
            self.keys, self.key_index, cur_u = names[:], first, dict(first)
        elif prev is not None and report is not None:
            back = {b: a for a, b in report.renamed}
            added = {n.name for n in report.added}
            # a node removed by this very diff keeps its place for its ghost: an added node of the
            # same name (view -> reshape keeping the name "view_1") gets a place of its own
            used.update(self._prev_u[n.name] for n in report.removed if n.name in self._prev_u)
            for node in graph.nodes:
                if node.name in added:
                    later.append(node)
                    continue
                u = self._prev_u.get(back.get(node.name, node.name))
                if u is None or u in used:
                    later.append(node)
                    continue
                cur_u[node.name] = u
                used.add(u)
        else:
            later = graph.nodes
        for node in later:
            if node.name not in cur_u:
                u = self._slot(node.name, used)
                cur_u[node.name] = u
                used.add(u)
        positions = list(map(cur_u.__getitem__, names))
        # the nodes not named as their place's key (the comparison in C, the dict over those few); keyed
        # by position, which JSON writes as a string ("names": {"3": "Add_2"})
        differs = list(compress(count(), map(operator.ne, map(self.keys.__getitem__, positions), names)))
        renamed = dict(zip(differs, map(names.__getitem__, differs), strict=True))
        ops, streams = self.ops, self.streams
        op_ids = numbered([n.op for n in graph.nodes], ops)
        stream_ids = numbered([n.stream for n in graph.nodes], streams)
        det, new_det = self._details(graph.nodes, positions)
        edges = snapshot_edges(graph, positions)
        union_edges = self.edges
        for flat in edges.values():
            union_edges.update(zip(flat[::2], flat[1::2], strict=True))
        snap = {"nodes": positions, "names": renamed, "op": op_ids, "stream": stream_ids, "det": det,
                "edges": edges, "lanes": None}
        self.snapshots.append(snap)
        self._unsettled.append((snap, positions, graph, key))
        if key is None:  # worked out here and now, as the snapshots come
            self.settle()
        diff = None if prev is None or report is None else self._diff(report, cur_u)
        self._prev, self._prev_u, self._prev_det = graph, cur_u, new_det
        return len(self.snapshots) - 1, diff

    def _details(self, nodes: list[Node], positions: list[int]) -> tuple[list[int], dict[int, tuple[Node, int]]]:
        """Each node's entry in :attr:`details` (a node unchanged since the previous snapshot keeps its
        entry), and the (node, entry) per place for the next snapshot."""
        details, prev_det = self.details, self._prev_det
        if not prev_det:  # nothing to share: every node its own entry
            det = list(range(len(details), len(details) + len(nodes)))
            details.extend(map(detail, nodes))
            return det, dict(zip(positions, zip(nodes, det, strict=True), strict=True))
        det = []
        new_det: dict[int, tuple[Node, int]] = {}
        for node, u in zip(nodes, positions, strict=True):
            old = prev_det.get(u)
            if old is not None and (old[0] is node or old[0].__dict__ == node.__dict__):  # Node's fields, in C
                d = old[1]
            else:
                d = len(details)
                details.append(detail(node))
            det.append(d)
            new_det[u] = (node, d)
        return det, new_det

    def _diff(self, report: DiffReport, cur_u: dict[str, int]) -> dict[str, Any]:
        prev_u = self._prev_u

        def edge_list(edges: list[tuple[str, str, str]], where: dict[str, int]) -> list[list[Any]]:
            return [[where[s], where[d], k] for s, d, k in edges[:MAX_DIFF_EDGES] if s in where and d in where]

        return {
            "added": [cur_u[n.name] for n in report.added],
            "removed": [prev_u[n.name] for n in report.removed if n.name in prev_u],
            "changed": [[cur_u[c.name], ",".join(c.changes)] for c in report.changed if c.name in cur_u],
            "summary": report.summary(),
            "edges_added": edge_list(report.edges_added, cur_u),
            "edges_removed": edge_list(report.edges_removed, prev_u),
        }

    def settle(self) -> None:
        """Give the snapshots added so far their program order and lane view (:mod:`airctl.report.ahead`'s,
        or worked out here), in the order they were added."""
        streams = self.streams
        for snap, positions, graph, key in self._unsettled:
            if key is not None and self.ahead is not None:
                extras = self.ahead.take(key, graph)
            else:
                extras = snapshot_extras(graph, self.mode)
            order, lanes = extras["order"], extras["lanes"]
            lanes["streams"] = [streams.setdefault(s, len(streams)) for s in lanes["streams"]]
            flat = snap["edges"]["order"] = [positions[i] for i in order["pairs"]]
            self.edges.update(zip(flat[::2], flat[1::2], strict=True))
            self.pull.update(positions[i] for i in order["pull"])
            self.column.update(zip(positions, order["streams"], strict=True))
            snap["lanes"] = lanes
        self._unsettled.clear()

    def to_json(self) -> dict[str, Any]:
        self.settle()
        columns = list(dict.fromkeys(self.column.values()))
        col = {s: k for k, s in enumerate(columns)}
        groups = [col[self.column[u]] for u in range(len(self.keys))] if len(columns) > 1 else None
        lay = layered_layout(len(self.keys), self.edges, dx=NODE_W + 30, dy=70.0, pull=self.pull, groups=groups)
        stream_names = list(self.streams)
        fills = stream_fills(stream_names)
        return {
            "graph": self.graph_id,
            "dialect": self.dialect,
            "keys": self.keys,
            "x": [round(v) for v in lay.x],
            "y": [round(v) for v in lay.y],
            "ops": list(self.ops),
            "streams": stream_names,
            "fills": [fills[s] for s in stream_names],
            "details": self.details,
            "snapshots": self.snapshots,
        }

"""The snapshots of a ledger as the origin chains read them: each file loaded once, each pair of
consecutive FX snapshots matched once, and the lookups a chain makes per node kept as indexes.

``airctl show --node`` asks for one node's chain; report.html asks for every node's
(:func:`airctl.diff.chain.graph_chains`). Both go through this one cache, so a chain costs a few
dictionary lookups per stage once the stages are matched, not a scan of a graph per node:

- the pairs of two snapshots both ways (:meth:`Snapshots.a_to_b`, :meth:`Snapshots.b_to_a`);
- a GE snapshot's ops by the FX node they were converted from (:meth:`Snapshots.ge_by_fx`);
- an FX snapshot's calls by (source line, module) (:meth:`Snapshots.lines`, for the Dynamo link);
- per pair, the later snapshot's new nodes by the producers they read (:meth:`Snapshots.made_index`,
  for "fused into or replaced by").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from airctl.diff.chain_dynamo import Lines, call_lines
from airctl.diff.match import match_graphs
from airctl.graph.model import Graph, Node
from airctl.ledger.index import StageRef
from airctl.ledger.reader import Ledger


class Snapshots:
    """Each snapshot file of a ledger loaded once (stages that changed nothing share a file);
    ``known``: snapshots the caller holds already (ledger-relative file -> Graph); ``matched``: pairs
    of snapshots the caller matched already with :func:`~airctl.diff.match.match_graphs` ((file, later
    file) -> matched node names)."""

    def __init__(self, led: Ledger, known: Mapping[str, Graph] | None = None,
                 matched: Mapping[tuple[str, str], dict[str, str]] | None = None) -> None:
        self.led = led
        self._loaded: dict[str, Graph] = dict(known or {})
        self._matched = matched or {}
        self._pairs: dict[tuple[str, str], dict[str, str]] = {}
        self._back: dict[tuple[str, str], dict[str, str]] = {}
        self._ge: dict[str, dict[str, list[Node]]] = {}
        self._lines: dict[str, Lines] = {}
        self._made: dict[tuple[str, str], dict[str, Any]] = {}
        self._memo: dict[Any, Any] = {}

    def memo(self, key: Any, make: Callable[[], Any]) -> Any:
        """``make()``, once per ``key`` for this ledger (a stage's pass: one object every chain shares)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def __call__(self, stage: StageRef) -> Graph:
        if stage.file not in self._loaded:
            self._loaded[stage.file] = self.led.load(stage)
        return self._loaded[stage.file]

    def stage_list(self, stages: list[StageRef]) -> tuple[list[str], list[Graph]]:
        """The files and loaded snapshots of ``stages`` (a graph's FX stages, asked for once per chain)."""
        key = ("stages", id(stages))
        held = self._memo.get(key)
        if held is None or held[0] is not stages:  # the list itself is kept with them: its id stays its own
            held = self._memo[key] = (stages, [s.file for s in stages], [self(s) for s in stages])
        return held[1], held[2]

    def a_to_b(self, a: StageRef, b: StageRef) -> dict[str, str]:
        """Node names of stage ``a`` -> their pairs in the later stage ``b`` (matched once)."""
        key = (a.file, b.file)
        if key not in self._pairs:
            done = self._matched.get(key)
            pairs = {} if a.file == b.file else dict(done) if done is not None else dict(match_graphs(
                self(a), self(b)).a_to_b)
            if a.file != b.file:  # a node replaced in place keeps its name (reinplacing: addmm -> addmm_)
                taken = set(pairs.values())
                later = self(b)
                pairs.update({n.name: n.name for n in self(a).nodes
                              if n.name not in pairs and n.name not in taken and later.get(n.name) is not None})
            self._pairs[key] = pairs
        return self._pairs[key]

    def b_to_a(self, a: StageRef, b: StageRef) -> dict[str, str]:
        """The inverse of :meth:`a_to_b` (a matching: one-to-one)."""
        key = (a.file, b.file)
        if key not in self._back:
            self._back[key] = {y: x for x, y in self.a_to_b(a, b).items()}
        return self._back[key]

    def ge_by_fx(self, stage: StageRef) -> dict[str, list[Node]]:
        """A GE snapshot's ops by the FX node each names in ``fx_tensor_names`` (``addmm_1-aten...``)."""
        if stage.file not in self._ge:
            index: dict[str, list[Node]] = {}
            for op in self(stage).nodes:
                for fx in op.fx_nodes():
                    index.setdefault(fx, []).append(op)
            self._ge[stage.file] = index
        return self._ge[stage.file]

    def lines(self, stage: StageRef) -> Lines:
        """An FX snapshot's calls grouped by (source line, module), in graph order."""
        if stage.file not in self._lines:
            self._lines[stage.file] = call_lines(self(stage))
        return self._lines[stage.file]

    def made_beside(self, prev: StageRef, cur: StageRef, gone: str) -> list[str]:
        """The nodes the pass of ``cur`` created that took the place of ``gone`` (a node of ``prev``
        with no pair in ``cur``): new in ``cur`` and reading what ``gone`` read, or read by what read
        ``gone``; in ``cur``'s order."""
        idx = self._made_index(prev, cur)
        node = self(prev).get(gone)
        if node is None:
            return []
        a_to_b, new_by_input, order = idx["a_to_b"], idx["new_by_input"], idx["order"]
        later = self(cur)
        made: set[str] = set()
        for ref in node.inputs:
            mapped = a_to_b.get(Node.producer(ref))
            if mapped is not None:
                made.update(new_by_input.get(mapped, ()))
        for user in idx["users"].get(gone, ()):
            mapped = a_to_b.get(user)
            reader = later.get(mapped) if mapped is not None else None
            if reader is not None:
                made.update(p for p in map(Node.producer, reader.inputs) if p in order)
        return sorted(made, key=order.__getitem__)

    def _made_index(self, prev: StageRef, cur: StageRef) -> dict[str, Any]:
        key = (prev.file, cur.file)
        if key not in self._made:
            a_to_b = self.a_to_b(prev, cur)
            paired = set(a_to_b.values())
            order = {n.name: k for k, n in enumerate(self(cur).nodes) if n.name not in paired}
            new_by_input: dict[str, list[str]] = {}
            for n in self(cur).nodes:
                if n.name in order:
                    for p in dict.fromkeys(map(Node.producer, n.inputs)):
                        new_by_input.setdefault(p, []).append(n.name)
            users: dict[str, list[str]] = {}
            for n in self(prev).nodes:
                for p in dict.fromkeys(map(Node.producer, n.inputs)):
                    users.setdefault(p, []).append(n.name)
            self._made[key] = {"a_to_b": a_to_b, "order": order, "new_by_input": new_by_input, "users": users}
        return self._made[key]

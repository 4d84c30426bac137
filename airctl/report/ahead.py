"""Each snapshot's lane view and program order, worked out in a forked child while the report diffs.

A report's cost is per snapshot and per pair of snapshots: read each one, diff each with the one
before, place its nodes in the group's union, then its lane view (the verifier's findings marked
on it) and its program order (scope, record and wait nodes tied to their ops). The last two need
nothing but the snapshot itself, so on a machine with a second core a child works them out for
every snapshot (:class:`~airctl.aside.Aside`: forked, so it holds the graphs the parent already
has in memory and reads the others itself) while the parent reads, diffs and places. The parent
takes the results when it lays the group out (:meth:`~airctl.report.payload.Group.settle`). On a
50k-node, 4-stage ledger that takes about 0.9 s of 4.4 off the parent (docs/performance.md).

Small ledgers (under :data:`FORK_NODES` nodes in all) are not worth a process: everything runs in
the parent, as it does where there is no ``fork`` or the child fails (its results are then
worked out in the parent, the same way).

The child hands back JSON: per snapshot file, the lane view with stream *names* (the parent
numbers them in its group) and the order as ``{"pairs": [src, dst, ...], "pull": [...],
"streams": [...]}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from airctl.aside import Aside
from airctl.graph.model import Graph
from airctl.graph.refs import pinned
from airctl.modes import Mode
from airctl.render.order import program_order
from airctl.report.lanes_data import flat_pairs, lanes_json

FORK_NODES = 20_000  # nodes over every snapshot below which the report stays in one process

Getter = Callable[[], Graph | None]


def snapshot_extras(graph: Graph, mode: Mode) -> dict[str, Any]:
    """``{"lanes": <lane view, stream names>, "order": {pairs, pull, streams}}`` of one snapshot (its
    reference table built once for the order, the verifier and the lanes: :func:`pinned`)."""
    with pinned(graph):
        order = program_order(graph)
        lanes = lanes_json(graph, mode, lambda s: s)
    return {"lanes": lanes, "order": {"pairs": flat_pairs(order.pairs()), "pull": sorted(order.pull),
                                      "streams": order.streams}}


class Ahead:
    """The extras of the snapshots ``snapshots`` names ((file, getter) in report order), from a child."""

    def __init__(self, snapshots: Iterable[tuple[str, Getter]], mode: Mode) -> None:
        self.mode = mode
        self._jobs = list(snapshots)
        self._aside = Aside(self._work, returns=True)
        self._done: dict[str, dict[str, Any]] | None = None

    def _work(self) -> bytes:
        out = {}
        for key, get in self._jobs:
            graph = get()
            if graph is not None:
                out[key] = snapshot_extras(graph, self.mode)
        return json.dumps(out, separators=(",", ":")).encode("utf-8")

    def take(self, key: str, graph: Graph) -> dict[str, Any]:
        """The extras of snapshot ``key`` (``graph``): the child's, or worked out here when it has none."""
        if self._done is None:
            data = self._aside.result()
            try:
                done = json.loads(data) if data else {}
            except ValueError:
                done = {}
            self._done = done if isinstance(done, dict) else {}
        extras = self._done.get(key)
        return extras if extras is not None else snapshot_extras(graph, self.mode)


def worth_forking(node_counts: Iterable[int | None]) -> bool:
    return sum(n or 0 for n in node_counts) >= FORK_NODES

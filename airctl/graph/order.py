"""A graph's nodes in an order every edge goes forward in, the dumped order wherever it already is one.

GE dumps list ops mostly in order; a replay (:mod:`airctl.predict.plan`) and GE's stream allocation
(:mod:`airctl.graph.ge_streams`) both need a topological order that stays as close to it as it can:
Kahn's sort taking, of the ready nodes, the one dumped first. What a cycle leaves unsorted is returned
apart, for each caller to report its own way.
"""

from __future__ import annotations

import heapq

from airctl.graph.model import Graph, Node


def predecessors(graph: Graph, *, self_edges: bool = False) -> list[set[int]]:
    """Per node (by position), the positions of the nodes it reads or is ordered after (data and control)."""
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    out: list[set[int]] = []
    for i, n in enumerate(graph.nodes):
        found = {index[p] for ref in [*n.inputs, *n.control_inputs] if ref and (p := Node.producer(ref)) in index}
        out.append(found if self_edges else found - {i})
    return out


def topological(preds: list[set[int]]) -> tuple[list[int], list[int]]:
    """(the sorted positions, the positions a cycle left unsorted, in dumped order).

    >>> topological([set(), {2}, {0}])
    ([0, 2, 1], [])
    >>> topological([{1}, {0}, set()])
    ([2], [0, 1])
    """
    users: list[list[int]] = [[] for _ in preds]
    for i, ps in enumerate(preds):
        for p in ps:
            users[p].append(i)
    waiting = [len(ps) for ps in preds]
    ready = [i for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for u in users[i]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, u)
    return order, [i for i, w in enumerate(waiting) if w > 0]

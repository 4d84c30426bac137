"""A minimum vertex-disjoint path cover of a DAG, by maximum bipartite matching (Hopcroft-Karp).

GE's automatic multi-stream starts from the chains of a minimum path cover (docs/sim.md, "GE's
automatic multi-stream"): every op is on exactly one chain, consecutive ops of a chain are joined
by an edge of the graph (so a chain runs on one stream with no event inside it), and there are as
few chains as possible: ``len(nodes) - |maximum matching|`` of the bipartite graph whose left side
is each op as a producer and right side each op as a consumer, one edge per graph edge.

Nodes are ``0..n-1`` in a topological order; ``succ[u]`` lists the successors of ``u`` (each
larger than ``u``). Ties are broken towards the earliest successor, so the cover is deterministic.

>>> path_cover(4, [[1, 2], [3], [3], []])   # a diamond: two chains
[[0, 1, 3], [2]]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

_INF = 1 << 60


def max_matching(n: int, succ: Sequence[Sequence[int]]) -> list[int]:
    """``match[u]`` = the successor ``u`` is matched to as producer, or -1 (Hopcroft-Karp, iterative)."""
    match_l = [-1] * n  # producer u -> consumer
    match_r = [-1] * n  # consumer v -> producer
    for u in range(n):  # greedy start: the earliest free successor
        for v in succ[u]:
            if match_r[v] < 0:
                match_l[u], match_r[v] = v, u
                break
    while True:
        dist = [_INF] * n
        queue = deque(u for u in range(n) if match_l[u] < 0)
        for u in queue:
            dist[u] = 0
        found = False
        while queue:
            u = queue.popleft()
            for v in succ[u]:
                w = match_r[v]
                if w < 0:
                    found = True
                elif dist[w] == _INF:
                    dist[w] = dist[u] + 1
                    queue.append(w)
        if not found:
            return match_l
        for root in range(n):
            if match_l[root] < 0:
                _augment(root, succ, dist, match_l, match_r)


def _augment(root: int, succ: Sequence[Sequence[int]], dist: list[int], match_l: list[int],
             match_r: list[int]) -> bool:
    """One augmenting path from the free producer ``root`` along the BFS layers (explicit stack)."""
    stack: list[tuple[int, int]] = [(root, 0)]
    path: list[tuple[int, int]] = []  # (producer, consumer) pairs tried so far
    while stack:
        u, i = stack.pop()
        edges = succ[u]
        while i < len(edges):
            v = edges[i]
            i += 1
            w = match_r[v]
            if w < 0:
                path.append((u, v))
                for pu, pv in path:
                    match_l[pu], match_r[pv] = pv, pu
                return True
            if dist[w] == dist[u] + 1:
                stack.append((u, i))
                path.append((u, v))
                stack.append((w, 0))
                break
        else:
            dist[u] = _INF  # a dead end: never tried again in this phase
            if path:
                path.pop()
    return False


def path_cover(n: int, succ: Sequence[Sequence[int]]) -> list[list[int]]:
    """The chains of a minimum path cover, each in order, sorted by their first node."""
    match = max_matching(n, succ)
    has_pred = [False] * n
    for u in range(n):
        if match[u] >= 0:
            has_pred[match[u]] = True
    chains: list[list[int]] = []
    for start in range(n):
        if has_pred[start]:
            continue
        chain = [start]
        while match[chain[-1]] >= 0:
            chain.append(match[chain[-1]])
        chains.append(chain)
    return chains

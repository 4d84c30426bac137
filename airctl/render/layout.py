"""A layered (top-to-bottom) layout that stays fast on graphs far beyond what ``dot`` can lay out.

``dot`` grows as about n^2.6 (7-8 s at 2k nodes, 82 s at 5k; reference/spike.md §3), so
airctl lays out big graphs itself, in time linear in nodes plus edges (plus a sort per layer):

1. **Layers** by longest path from the sources (Kahn's order; nodes on cycles, which only
   malformed input has, follow in file order and their back edges are ignored). Sources that
   feed something (parameters, constants) are then pulled down to just above their first user,
   so they do not all pile up in one very wide first layer.
2. **Order within a layer** by barycentres: a few down and up sweeps, each sorting a layer by the
   mean x of its neighbours in the layers already placed. No dummy nodes for long edges, which
   keeps it linear; long edges may cross more than ``dot``'s would.
3. **Coordinates**: each layer centred on x = 0, ``dx`` apart in a layer and ``dy`` between layers.

>>> lay = layered_layout(3, [(0, 1), (0, 2)])
>>> lay.layer, lay.x
([0, 1, 1], [0.0, -90.0, 90.0])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

DX = 180.0  # horizontal distance between neighbours in a layer
DY = 70.0  # vertical distance between layers
SWEEPS = 2  # down+up barycentre sweep pairs


@dataclass
class Layout:
    layer: list[int]
    x: list[float]
    y: list[float]

    def bounds(self) -> tuple[float, float, float, float]:
        """(min x, min y, max x, max y) of the node centres; zeros for an empty layout."""
        if not self.x:
            return 0.0, 0.0, 0.0, 0.0
        return min(self.x), min(self.y), max(self.x), max(self.y)


def _topo(n: int, succ: list[list[int]], indeg: list[int]) -> list[int]:
    indeg = indeg[:]
    ready = [i for i in range(n - 1, -1, -1) if indeg[i] == 0]
    order: list[int] = []
    while ready:
        i = ready.pop()
        order.append(i)
        released = []
        for s in succ[i]:
            indeg[s] -= 1
            if indeg[s] == 0:
                released.append(s)
        if released:
            released.sort(reverse=True)
            ready.extend(released)
    if len(order) < n:  # cycles: the rest in file order
        seen = set(order)
        order += [i for i in range(n) if i not in seen]
    return order


def layered_layout(n: int, edges: Iterable[tuple[int, int]], dx: float = DX, dy: float = DY,
                   sweeps: int = SWEEPS) -> Layout:
    """Lay out ``n`` nodes (0..n-1) joined by ``edges`` (src, dst); duplicate edges are harmless."""
    succ: list[list[int]] = [[] for _ in range(n)]
    pred: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for s, d in edges:
        if s == d or not (0 <= s < n and 0 <= d < n):
            continue
        succ[s].append(d)
        pred[d].append(s)
        indeg[d] += 1
    order = _topo(n, succ, indeg)
    rank = [0] * n
    for r, i in enumerate(order):
        rank[i] = r
    # forward edges only (a back edge exists only on a cycle)
    fpred = [[p for p in pred[i] if rank[p] < rank[i]] for i in range(n)]
    layer = [0] * n
    for i in order:
        ps = fpred[i]
        if ps:
            layer[i] = max(layer[p] for p in ps) + 1
    # Sources, and single-input chains hanging off them (a weight and its transpose), sit just
    # above their first user instead of in the first rows. Reverse topological order: users first.
    pullable = [False] * n
    for i in order:
        ps = fpred[i]
        pullable[i] = not ps or (len(ps) == 1 and pullable[ps[0]])
    for i in reversed(order):
        if pullable[i]:
            users = [layer[s] for s in succ[i] if rank[s] > rank[i]]
            if users:
                layer[i] = max(layer[i], min(users) - 1)
    depth = max(layer, default=-1) + 1
    layers: list[list[int]] = [[] for _ in range(depth)]
    for i in order:
        layers[layer[i]].append(i)
    x = [0.0] * n

    def place(row: list[int]) -> None:
        half = (len(row) - 1) / 2
        for p, i in enumerate(row):
            x[i] = (p - half) * dx

    for row in layers:
        place(row)
    for _ in range(sweeps):
        for rows, nbrs in ((layers[1:], fpred), (layers[-2::-1], succ)):
            for row in rows:
                if len(row) < 2:
                    place(row)
                    continue
                keys = []
                for i in row:
                    ns = nbrs[i]
                    keys.append(sum(x[j] for j in ns) / len(ns) if ns else x[i])
                row[:] = [i for _, i in sorted(zip(keys, row, strict=True), key=lambda kv: kv[0])]
                place(row)
    y = [layer[i] * dy for i in range(n)]
    return Layout(layer, x, y)

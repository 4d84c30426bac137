"""A layered (top-to-bottom) layout that stays fast on graphs far beyond what ``dot`` can lay out.

``dot`` grows as about n^2.6 (7-8 s at 2k nodes, 82 s at 5k; reference/spike.md §3), so
airctl lays out big graphs itself, in time linear in nodes plus edges (plus a sort per layer):

1. **Layers** by longest path from the sources (Kahn's order; nodes on cycles, which only
   malformed input has, follow in file order and their back edges are ignored). Sources that
   feed something (parameters, constants) are then pulled down to just above their first user,
   so they do not all pile up in one very wide first layer. Nodes the caller names in ``pull``
   (a ``scope_enter`` or ``wait`` tied to the op after it, :mod:`airctl.render.order`) are pulled
   down the same way, to just above their first successor.
2. **Order within a layer** by barycentres: a few down and up sweeps, each sorting a layer by the
   mean x of its neighbours in the layers already placed. No dummy nodes for long edges, which
   keeps it linear; long edges may cross more than ``dot``'s would.
3. **Coordinates**: each layer centred on x = 0, ``dx`` apart in a layer and ``dy`` between layers.
   With ``groups`` (a stream per node), each group gets its own column, as wide as its widest
   layer, and a layer's nodes of one group are centred in that column: streams never interleave,
   so a stream scope can be drawn as a band around its nodes, like ``dot``'s clusters.

>>> lay = layered_layout(3, [(0, 1), (0, 2)])
>>> lay.layer, lay.x
([0, 1, 1], [0.0, -90.0, 90.0])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter

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
                   sweeps: int = SWEEPS, pull: Iterable[int] = (), groups: list[int] | None = None) -> Layout:
    """Lay out ``n`` nodes (0..n-1) joined by ``edges`` (src, dst); duplicate edges are harmless.

    ``pull``: nodes placed directly above their first successor (rather than right under their
    predecessors). ``groups``: a column per node (0, 1, ...; left to right), see the module docstring.
    """
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
            layer[i] = max(map(layer.__getitem__, ps)) + 1
    # Sources, and single-input chains hanging off them (a weight and its transpose), sit just
    # above their first user instead of in the first rows. Reverse topological order: users first.
    pullable = [False] * n
    for i in order:
        ps = fpred[i]
        pullable[i] = not ps or (len(ps) == 1 and pullable[ps[0]])
    pulled = set(pull)
    for i in reversed(order):
        if pullable[i] or i in pulled:
            users = [layer[s] for s in succ[i] if rank[s] > rank[i]]
            if users:
                layer[i] = max(layer[i], min(users) - 1)
    depth = max(layer, default=-1) + 1
    layers: list[list[int]] = [[] for _ in range(depth)]
    for i in order:
        layers[layer[i]].append(i)
    x = [0.0] * n
    centre = _columns(layers, groups, dx) if groups is not None else []

    def place(row: list[int]) -> None:
        if groups is None:
            half = (len(row) - 1) / 2
            for p, i in enumerate(row):
                x[i] = (p - half) * dx
            return
        start = 0
        while start < len(row):  # a row is sorted by group: centre each group's run in its column
            g = groups[row[start]]
            end = start
            while end < len(row) and groups[row[end]] == g:
                end += 1
            half = (end - start - 1) / 2
            for p in range(start, end):
                x[row[p]] = centre[g] + (p - start - half) * dx
            start = end

    if groups is not None:
        for row in layers:
            row.sort(key=lambda i: groups[i])

    for row in layers:
        place(row)
    for _ in range(sweeps):
        for rows, nbrs in ((layers[1:], fpred), (layers[-2::-1], succ)):
            for row in rows:
                if len(row) < 2:
                    place(row)
                    continue
                at = x.__getitem__
                keys = [sum(map(at, ns)) / len(ns) if (ns := nbrs[i]) else x[i] for i in row]
                if groups is not None:
                    keys = [(groups[i], k) for i, k in zip(row, keys, strict=True)]
                row[:] = [i for _, i in sorted(zip(keys, row, strict=True), key=itemgetter(0))]
                place(row)
    y = [layer[i] * dy for i in range(n)]
    return Layout(layer, x, y)


def _columns(layers: list[list[int]], groups: list[int], dx: float) -> list[float]:
    """The x centre of each group's column: columns side by side, each as wide as the group's widest layer."""
    count = max(groups, default=-1) + 1
    width = [0] * count
    for row in layers:
        for g, k in Counter(groups[i] for i in row).items():
            width[g] = max(width[g], k)
    centre = [0.0] * count
    left = 0.0
    for g in range(count):
        centre[g] = left + (width[g] - 1) / 2 * dx
        left += width[g] * dx if width[g] else 0.0
    shift = (left - dx) / 2
    return [c - shift for c in centre]

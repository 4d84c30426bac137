"""Where the matcher starts, and what it uses where edges leave nothing to walk along.

- :func:`seed`: the anchors. The graph's output (GE ``NetOutput``, FX ``output``) when each side
  has one; a source node (no data inputs) alone on each side with its op and attributes (GE
  ``Data`` with its ``index``, a distinct constant), scope attributes aside (a stream label says
  where a node runs, not what it is: anchoring by it paired moved Consts crosswise); FX
  placeholders, which have no attributes, k-th with k-th when both sides have equally many:
  their order is the argument order.
- :func:`unique_ops`: an op that only one unpaired node has on each side, when the ops around
  the two agree in every place and no paired neighbour contradicts: a start inside a region the
  walk could not enter. Not an anchor from the start: an op changed at one place and the same op
  inserted at another make a unique op appear somewhere else.
- :func:`signatures`: unpaired nodes alone on each side with the same op and the same neighbours,
  a paired neighbour standing for its pair and an unpaired one for its op.
- :func:`sequence`: unpaired nodes in a part of the graph with no edge to any paired node (FX
  ``record``/``wait``/``scope_*`` nodes, which have no data edge to the ops around them: their
  place in program order is their meaning), paired by op, attributes and the paired nodes just
  before and after them in file order.
"""

from __future__ import annotations

from collections import Counter

from airctl.diff.evidence import looks_alike
from airctl.diff.propagate import Pairing, fitter
from airctl.diff.sides import Side

OUTPUTS = ("NetOutput", "output")


def seed(p: Pairing) -> int:
    """The anchors the walk starts from (see the module docstring)."""
    a, b = p.a, p.b
    made = 0
    outs_a, outs_b = _outputs(a), _outputs(b)
    if len(outs_a) == len(outs_b) == 1:
        p.link(outs_a[0], outs_b[0], "anchor")
        made += 1
    made += p.link_unique(_sources(a), _sources(b), "anchor")
    inputs_a, inputs_b = _graph_inputs(a), _graph_inputs(b)
    if len(inputs_a) == len(inputs_b):  # the signature's k-th argument is the k-th argument
        for i, j in zip(inputs_a, inputs_b, strict=True):
            p.link(i, j, "anchor")
            made += 1
    return made


def unique_ops(p: Pairing) -> int:
    """Pair unpaired nodes whose op no other unpaired node has, on either side, when their
    neighbours' ops agree in every place and no paired neighbour contradicts the pair."""
    a, b = p.a, p.b
    ua, ub = a.unmatched(), b.unmatched()
    count_a, count_b = Counter(a.op[i] for i in ua), Counter(b.op[j] for j in ub)
    only_b = {b.op[j]: j for j in ub if count_b[b.op[j]] == 1}
    made = 0
    fits = fitter(p)
    for i in ua:
        j = only_b.get(a.op[i], -1)
        if j >= 0 and count_a[a.op[i]] == 1 and looks_alike(p, i, j, inputs=True) \
                and looks_alike(p, i, j, inputs=False) and fits(i, j):
            p.link(i, j, "anchor")
            made += 1
    return made


def _outputs(side: Side) -> list[int]:
    return _of_ops(side, OUTPUTS)


def _of_ops(side: Side, names: tuple[str, ...]) -> list[int]:
    """The nodes whose op is one of ``names``, in file order."""
    wanted = {side.ops[name] for name in names if name in side.ops}
    return [i for i, op in enumerate(side.op) if op in wanted] if wanted else []


def _graph_inputs(side: Side) -> list[int]:
    """Unpaired FX placeholders in file order, i.e. in argument order."""
    nodes, pair = side.nodes, side.pair
    return [i for i in _of_ops(side, ("placeholder",)) if pair[i] < 0 and nodes[i].kind == "placeholder"]


def _sources(side: Side) -> list[tuple[tuple[int, int], int]]:
    """The unpaired source nodes, each keyed by its op and attributes (a stream label is placement, not
    part of the key: moved sources still anchor)."""
    return [((op, side.identity_key(i)), i) for i, op in enumerate(side.op)
            if not side.data_in[i] and side.pair[i] < 0]


def signatures(p: Pairing) -> int:
    """Pair unpaired nodes with a unique (op, neighbours) signature on both sides."""
    a, b = p.a, p.b

    def label(side: Side, k: int, to_a: bool) -> int:
        if k < 0:
            return -1
        paired = side.pair[k]
        if paired < 0:
            return -2 - side.op[k]
        return paired if to_a else k  # an a-side index, on both sides

    def sigs(side: Side, is_a: bool) -> list[tuple[int, int]]:
        return [(hash((side.op[i], tuple(label(side, k, not is_a) for k in side.data_in[i]),
                       tuple(sorted(label(side, u, not is_a) for u in side.users[i])))), i) for i in side.unmatched()]

    return p.link_unique(sigs(a, True), sigs(b, False), "signature")


def sequence(p: Pairing) -> int:
    """Pair nodes adrift (see the module docstring) by their place among paired nodes in file order.

    Tiers, each given to propagation as soon as it pairs something: sources of such components
    first (an FX ``record``; its ``wait`` then pairs along their edge), then the other nodes; by
    the paired nodes before and after, then before only, then after only.
    """
    a, b = p.a, p.b
    ctx_a, ctx_b = _contexts(a, True), _contexts(b, False)
    for sources in (True, False):
        for part in (slice(0, 2), slice(0, 1), slice(1, 2)):  # (before, after), before, after
            buckets: dict[tuple, tuple[list[int], list[int]]] = {}
            for i, ctx in ctx_a.items():
                if not a.data_in[i] or not sources:
                    buckets.setdefault((a.op[i], a.attr_key(i), ctx[part]), ([], []))[0].append(i)
            for j, ctx in ctx_b.items():
                if not b.data_in[j] or not sources:
                    group = buckets.get((b.op[j], b.attr_key(j), ctx[part]))
                    if group is not None:
                        group[1].append(j)
            made = 0
            for xs, ys in buckets.values():  # alike in the same place: file order (a pass may add a duplicate)
                for i, j in zip(sorted(xs), sorted(ys), strict=False):
                    p.link(i, j, "order")
                    made += 1
            if made:
                return made
    return 0


def _adrift(side: Side) -> list[int]:
    """Unpaired nodes whose whole component (data and control edges) is unpaired."""
    pair = side.pair
    seen: set[int] = set()
    out: list[int] = []
    for start in side.unmatched():
        if start in seen:
            continue
        component, todo, anchored = [start], [start], False
        seen.add(start)
        while todo:
            i = todo.pop()
            for lst in (side.data_in[i], side.users[i], side.ctrl_in[i], side.ctrl_users[i]):
                for k in lst:
                    if k < 0 or k in seen:
                        continue
                    if pair[k] >= 0:
                        anchored = True
                        continue
                    seen.add(k)
                    component.append(k)
                    todo.append(k)
        if not anchored:
            out += component
    return out


def _contexts(side: Side, is_a: bool) -> dict[int, tuple[int, int]]:
    """Nodes adrift -> (paired node before, paired node after) in file order, as a-side indices."""
    pair = side.pair
    lonely = _adrift(side)
    if not lonely:
        return {}
    anchored = [pair[i] >= 0 and bool(side.data_in[i] or side.users[i]) for i in range(side.n)]
    before: dict[int, int] = {}
    last = -1
    wanted = set(lonely)
    for i in range(side.n):
        if anchored[i]:
            last = i if is_a else pair[i]
        elif i in wanted:
            before[i] = last
    out: dict[int, tuple[int, int]] = {}
    nxt = -1
    for i in range(side.n - 1, -1, -1):
        if anchored[i]:
            nxt = i if is_a else pair[i]
        elif i in wanted:
            out[i] = (before[i], nxt)
    return out

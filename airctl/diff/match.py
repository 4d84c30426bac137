"""Match the nodes of two graphs by structure, so a diff survives renumbered names and reordered inputs.

Names are unreliable across dumps: GE numbers ops per graph (``Add_1`` becomes ``Add_2`` when an
earlier ``Add`` appears) and FX renumbers on every retrace (``mm`` -> ``mm_1``). So nodes are
matched by what they compute, in rounds, each from strict to loose:

1. **Signature hashing**, forward from the sources and backward from the outputs. A node's
   forward signature hashes its op (plus stream and attributes at the strictest level) with
   the labels of its inputs in order; a backward signature uses its users and the input slot
   it feeds. An already matched node's label is its pair's id, so every match anchors its
   neighbours in the next round. A signature shared by exactly one node on each side is a
   match (for forward signatures also equally many on each side, paired in graph order).
   Levels: ``strict`` (op, stream, attrs, data and control inputs), ``relaxed`` (op, ordered
   data inputs: finds stream moves and attribute changes), ``unordered`` (op, input multiset: finds reordered inputs).
2. **Neighbour vote**: an unmatched node pairs with the unmatched node of the same op that shares
   the most matched neighbours.
3. **Op and position**: same op and same name, or the k-th of an op on both sides when both
   have the same number left.
4. **Same place, other op**: identical matched inputs and users, different op (an op-type
   change counts as a changed node, not remove + add).

Every round is linear in the graph size; the number of rounds stays small because one pass
propagates matches through whole chains.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from airctl.graph.model import Graph, Node

_REF = re.compile(r"'%[^']*'")
LEVELS = ("strict", "relaxed", "unordered")
MAX_PASSES = 3


@dataclass
class Matching:
    """Pairs of node names (a -> b) and the rule that paired each."""

    a_to_b: dict[str, str] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)
    sides: tuple[Any, Any] | None = field(default=None, repr=False, compare=False)  # index arrays, for reports

    @property
    def b_to_a(self) -> dict[str, str]:
        return {b: a for a, b in self.a_to_b.items()}


class _Side:
    """One graph as integer arrays (fast to hash in rounds)."""

    def __init__(self, graph: Graph, is_a: bool) -> None:
        self.is_a = is_a
        nodes = graph.nodes
        self.nodes = nodes
        n = self.n = len(nodes)
        index = {node.name: i for i, node in enumerate(nodes)}
        self.index = index
        self.op_id = [hash(node.op) for node in nodes]
        self.stream_id = [hash(node.stream) for node in nodes]
        self.attr_id = [_attr_hash(node.attrs) if node.attrs else 0 for node in nodes]
        refs = _Refs(index)  # each distinct input reference is resolved once
        self.data_in: list[list[int]] = [[refs[r] for r in node.inputs] for node in nodes]
        self.ctrl_in: list[list[int]] = [[refs[r] for r in node.control_inputs] if node.control_inputs else []
                                         for node in nodes]
        self.strict_id = [hash(k) for k in zip(self.op_id, self.stream_id, self.attr_id, strict=True)]
        users: list[list[tuple[int, int]]] = [[] for _ in range(n)]  # (user, input slot; -1: control)
        user_ids: list[list[int]] = [[] for _ in range(n)]  # the same, as parallel lists
        user_slots: list[list[int]] = [[] for _ in range(n)]
        indeg = [0] * n
        ctrl_producers = []
        for i, ins in enumerate(self.data_in):
            for slot, p in enumerate(ins):
                if p >= 0:
                    users[p].append((i, slot))
                    user_ids[p].append(i)
                    user_slots[p].append(slot)
                    indeg[i] += 1
            ctrl = self.ctrl_in[i]
            if ctrl:
                for p in ctrl:
                    if p >= 0:
                        users[p].append((i, -1))
                        user_ids[p].append(i)
                        user_slots[p].append(-1)
                        indeg[i] += 1
                        ctrl_producers.append(p)
        self.users = users
        self.user_ids, self.user_slots = user_ids, user_slots
        # data users only (control users dropped), for the relaxed and unordered levels
        self.data_user_ids, self.data_user_slots = user_ids[:], user_slots[:]
        for p in set(ctrl_producers):
            kept = [k for k, slot in enumerate(user_slots[p]) if slot >= 0]
            self.data_user_ids[p] = [user_ids[p][k] for k in kept]
            self.data_user_slots[p] = [user_slots[p][k] for k in kept]
        self.topo = _topo_order(n, users, indeg)
        rank = [0] * n
        for r, i in enumerate(self.topo):
            rank[i] = r
        self.rank = rank
        self.pair = [-1] * n  # index in the other graph, or -1
        self.anchor = [0] * n  # matched: _ANCHOR + the a-side index of the pair
        self.fresh: list[int] = []  # a side: matched since the last propagation
        self._todo = self.topo

    def unmatched(self) -> list[int]:
        """Unmatched nodes in topo order. Pairs are never undone, so the last list is filtered."""
        pair = self.pair
        self._todo = [i for i in self._todo if pair[i] < 0]
        return self._todo


class _Refs(dict[str, int]):
    """Input reference -> producer index (-1: not in the graph), computed on first use."""

    def __init__(self, index: dict[str, int]) -> None:
        super().__init__()
        self.index = index

    def __missing__(self, ref: str) -> int:
        found = self[ref] = self.index.get(Node.producer(ref), -1)
        return found


def _attr_hash(attrs: dict[str, Any]) -> int:
    text = repr(sorted(attrs.items(), key=lambda kv: kv[0]))
    # FX args name their inputs ("%mm"); those names change with renumbering, so they are masked
    return hash(_REF.sub("'%'", text) if "'%" in text else text)


def _topo_order(n: int, users: list[list[tuple[int, int]]], indeg: list[int]) -> list[int]:
    """Kahn's order, ties by file order; nodes on cycles (malformed input) follow in file order.

    Depth-first among ready nodes: the nodes a node releases are taken next, smallest index first.
    """
    indeg = indeg[:]
    ready = [i for i in range(n) if indeg[i] == 0]
    ready.reverse()
    order: list[int] = []
    append, pop, extend = order.append, ready.pop, ready.extend
    while ready:
        i = pop()
        append(i)
        outs = users[i]
        if not outs:
            continue
        released = []
        for u, _slot in outs:
            left = indeg[u] - 1
            indeg[u] = left
            if not left:
                released.append(u)
        if len(released) == 1:
            append_ready = released[0]
            ready.append(append_ready)
        elif released:
            released.sort(reverse=True)
            extend(released)
    if len(order) < n:
        seen = set(order)
        order += [i for i in range(n) if i not in seen]
    return order


_ANCHOR = 1 << 62


def _forward(side: _Side, level: str, todo: list[int]) -> list[int]:
    # matched nodes keep their anchor; unmatched ones are computed in topo order. The extra last
    # entry is what a dangling input (index -1) reads.
    label = side.anchor + [-1]
    get = label.__getitem__
    data_in = side.data_in
    if level == "strict":
        ctrl_in, key = side.ctrl_in, side.strict_id
        for i in todo:
            ctrl = ctrl_in[i]
            label[i] = hash((key[i], tuple(map(get, data_in[i])), tuple(sorted(map(get, ctrl))) if ctrl else ()))
    elif level == "relaxed":
        key = side.op_id
        for i in todo:
            label[i] = hash((2, key[i], tuple(map(get, data_in[i]))))
    else:
        key = side.op_id
        for i in todo:
            label[i] = hash((2, key[i], tuple(sorted(map(get, data_in[i])))))
    return label


def _backward(side: _Side, level: str, todo: list[int]) -> list[int]:
    label = side.anchor[:]
    get = label.__getitem__
    if level == "strict":
        key, users, slots = side.strict_id, side.user_ids, side.user_slots
        for i in reversed(todo):
            us = users[i]
            label[i] = hash((key[i], tuple(sorted(zip(map(get, us), slots[i], strict=True))) if us else ()))
    elif level == "relaxed":
        key, users, slots = side.op_id, side.data_user_ids, side.data_user_slots
        for i in reversed(todo):
            us = users[i]
            label[i] = hash((4, key[i], tuple(sorted(zip(map(get, us), slots[i], strict=True))) if us else ()))
    else:
        key, users = side.op_id, side.data_user_ids
        for i in reversed(todo):
            us = users[i]
            label[i] = hash((5, key[i], tuple(sorted(map(get, us))) if us else ()))
    return label


def _pair_buckets(a: _Side, b: _Side, la: list[int], lb: list[int], how: str, out: dict[int, str],
                  unique: bool) -> int:
    buckets: dict[int, tuple[list[int], list[int]]] = {}
    for i in a.unmatched():
        buckets.setdefault(la[i], ([], []))[0].append(i)
    for j in b.unmatched():
        entry = buckets.get(lb[j])
        if entry is not None:
            entry[1].append(j)
    made = 0
    for xs, ys in buckets.values():
        if xs and len(xs) == len(ys) and (len(xs) == 1 or not unique):
            for i, j in zip(xs, ys, strict=True):
                _link(a, b, i, j)
                out[i] = how
                made += 1
    return made


def _link(a: _Side, b: _Side, i: int, j: int) -> None:
    a.pair[i] = j
    b.pair[j] = i
    a.anchor[i] = b.anchor[j] = _ANCHOR + i
    a.fresh.append(i)


def _neighbour_vote(a: _Side, b: _Side, out: dict[int, str]) -> int:
    made = 0
    for i in a.topo:
        if a.pair[i] >= 0:
            continue
        votes: dict[int, int] = defaultdict(int)
        for p in a.data_in[i] + a.ctrl_in[i]:
            if p >= 0 and a.pair[p] >= 0:
                for u, _slot in b.users[a.pair[p]]:
                    if b.pair[u] < 0 and b.op_id[u] == a.op_id[i]:
                        votes[u] += 1
        for u, _slot in a.users[i]:
            if a.pair[u] >= 0:
                bu = a.pair[u]
                for p in b.data_in[bu] + b.ctrl_in[bu]:
                    if p >= 0 and b.pair[p] < 0 and b.op_id[p] == a.op_id[i]:
                        votes[p] += 1
        if not votes:
            continue
        name = a.nodes[i].name
        best = max(votes, key=lambda j: (votes[j], b.nodes[j].name == name, -abs(b.rank[j] - a.rank[i])))
        _link(a, b, i, best)
        out[i] = "neighbours"
        made += 1
    return made


def _op_position(a: _Side, b: _Side, out: dict[int, str]) -> int:
    made = 0
    by_name = {b.nodes[j].name: j for j in range(b.n) if b.pair[j] < 0}
    for i in a.topo:
        j = by_name.get(a.nodes[i].name)
        if a.pair[i] < 0 and j is not None and b.pair[j] < 0 and b.op_id[j] == a.op_id[i]:
            _link(a, b, i, j)
            out[i] = "name"
            made += 1
    groups: dict[int, tuple[list[int], list[int]]] = {}
    for i in a.topo:
        if a.pair[i] < 0:
            groups.setdefault(a.op_id[i], ([], []))[0].append(i)
    for j in b.topo:
        if b.pair[j] < 0 and b.op_id[j] in groups:
            groups[b.op_id[j]][1].append(j)
    for xs, ys in groups.values():
        if len(xs) == len(ys):
            for i, j in zip(xs, ys, strict=True):
                _link(a, b, i, j)
                out[i] = "position"
                made += 1
    return made


def _same_place(a: _Side, b: _Side, out: dict[int, str]) -> int:
    """Unmatched nodes whose matched inputs and users coincide: the op changed in place."""

    def key(side: _Side, i: int) -> tuple | None:
        # a matched neighbour is named by its a-side index on both sides
        def conv(k: int) -> int:
            return k if side.is_a else side.pair[k]

        data, ctrl, users = side.data_in[i], side.ctrl_in[i], side.users[i]
        if any(p < 0 or side.pair[p] < 0 for p in data + ctrl) or any(side.pair[u] < 0 for u, _ in users):
            return None
        if not data and not ctrl and not users:
            return None
        return (tuple(conv(p) for p in data), tuple(sorted(conv(p) for p in ctrl)),
                tuple(sorted((conv(u), slot) for u, slot in users)))

    buckets: dict[tuple, tuple[list[int], list[int]]] = {}
    for i in a.topo:
        if a.pair[i] < 0:
            k = key(a, i)
            if k is not None:
                buckets.setdefault(k, ([], []))[0].append(i)
    for j in b.topo:
        if b.pair[j] < 0:
            k = key(b, j)
            if k is not None and k in buckets:
                buckets[k][1].append(j)
    made = 0
    for xs, ys in buckets.values():
        if len(xs) == 1 and len(ys) == 1:
            _link(a, b, xs[0], ys[0])
            out[xs[0]] = "same-place"
            made += 1
    return made


def _compatible(a: _Side, b: _Side, i: int, j: int) -> bool:
    """No matched neighbour of ``i`` contradicts one of ``j`` (same slot, users as sets)."""
    for p, q in zip(a.data_in[i], b.data_in[j], strict=False):
        if p >= 0 and q >= 0 and a.pair[p] >= 0 and b.pair[q] >= 0 and a.pair[p] != q:
            return False
    users_b = {u for u, _ in b.users[j] if b.pair[u] >= 0}
    users_a = {a.pair[u] for u, _ in a.users[i] if a.pair[u] >= 0}
    return users_a == users_b


def _inputs_agree(a: _Side, b: _Side, i: int, j: int) -> bool:
    """Positive evidence for pairing producers: some input slot holds the same matched node (or neither has inputs)."""
    ins_a, ins_b = a.data_in[i], b.data_in[j]
    if not ins_a and not ins_b:
        return True
    return any(p >= 0 and a.pair[p] >= 0 and a.pair[p] == q for p, q in zip(ins_a, ins_b, strict=False))


def _propagate(a: _Side, b: _Side, out: dict[int, str]) -> int:
    """Grow the matching along edges: around each matched pair, pair the neighbours that are unique
    on both sides by (op, input slot). Linear in the edges; crosses changed regions that hashing
    cannot see through (a node whose input was replaced still has its unchanged users and siblings).
    """
    queue = a.fresh
    made = 0
    while queue:
        i = queue.pop()
        j = a.pair[i]
        groups: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
        for u, slot in a.users[i]:
            if a.pair[u] < 0:
                groups.setdefault((a.op_id[u], slot), ([], []))[0].append(u)
        if groups:
            for u, slot in b.users[j]:
                if b.pair[u] < 0 and (b.op_id[u], slot) in groups:
                    groups[(b.op_id[u], slot)][1].append(u)
            for xs, ys in groups.values():
                if len(set(xs)) == 1 and len(set(ys)) == 1 and a.pair[xs[0]] < 0 and b.pair[ys[0]] < 0 \
                        and _compatible(a, b, xs[0], ys[0]):
                    _link(a, b, xs[0], ys[0])  # queues xs[0]
                    out[xs[0]] = "neighbours"
                    made += 1
        ins_a, ins_b = a.data_in[i], b.data_in[j]
        if len(ins_a) == len(ins_b):
            for p, q in zip(ins_a, ins_b, strict=True):
                if p >= 0 and q >= 0 and a.pair[p] < 0 and b.pair[q] < 0 and a.op_id[p] == b.op_id[q] \
                        and ins_a.count(p) == 1 and ins_b.count(q) == 1 and _compatible(a, b, p, q) \
                        and _inputs_agree(a, b, p, q):
                    _link(a, b, p, q)  # queues p
                    out[p] = "neighbours"
                    made += 1
    return made


def _hash_round(a: _Side, b: _Side, level: str, how: dict[int, str]) -> int:
    # equal forward signatures mean equal computations, so equally many are paired in order; backward
    # signatures are weaker (every unused node of an op looks alike), so only unique ones pair
    made = _pair_buckets(a, b, _forward(a, level, a.unmatched()), _forward(b, level, b.unmatched()), level, how,
                         unique=False)
    return made + _pair_buckets(a, b, _backward(a, level, a.unmatched()), _backward(b, level, b.unmatched()),
                                level, how, unique=True)


def match_graphs(a_graph: Graph, b_graph: Graph) -> Matching:
    """Pair the nodes of ``a_graph`` with those of ``b_graph`` (see the module docstring)."""
    a, b = _Side(a_graph, True), _Side(b_graph, False)  # anchors are labelled by the a-side index
    how: dict[int, str] = {}
    for _ in range(MAX_PASSES):
        made = 0
        for level in LEVELS:
            if min(a.pair, default=0) >= 0 or min(b.pair, default=0) >= 0:
                break
            made += _hash_round(a, b, level, how)
            made += _propagate(a, b, how)
        if not made:
            break
    _neighbour_vote(a, b, how)
    _op_position(a, b, how)
    _same_place(a, b, how)
    result = Matching(sides=(a, b))
    for i in range(a.n):
        if a.pair[i] >= 0:
            name = a.nodes[i].name
            result.a_to_b[name] = b.nodes[a.pair[i]].name
            result.how[name] = how.get(i, "?")
    return result

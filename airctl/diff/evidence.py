"""Pair the nodes propagation stopped at, by how many of their paired neighbours agree.

Propagation (:mod:`airctl.diff.propagate`) pairs only same-op nodes that are the only candidates
in their input slot or (op, slot) group. What it leaves next to a stuck pair is one of:

- an op changed in place: the node between two paired neighbours has another op on each side;
- several same-op users of one node (q, k and v projections of one input): told apart by their
  other paired neighbours, and only when those cannot tell them apart, by name, then by position;
- inputs read in another order, or a control-only neighbour.

A round collects candidate pairs around the stuck nodes only and scores each by its paired
neighbours: one that is the counterpart's neighbour too (in the same role) *agrees* (2 points); one
that is two steps from the counterpart through an unpaired node, i.e. a node inserted or removed
between them, is *bridged* (1 point); any other *contradicts* (-2), and an op change costs like a
contradiction. The best go first, in tiers: a round links only candidates of the best tier
present, then propagation uses them before the next.

0. a score of 4 or more; 1. a score of 2 or 3; 2. less.

An op change needs paired inputs and paired users that agree (one side is enough for a source or
a sink) and nothing contradicting or bridged; where the walk has reached one side only (two
edits can seal off the layers between them), the other side's neighbours must at least have the
same ops in the same slots. A same-op pair needs an agreeing neighbour, or bridged ones and
that same likeness (the node next to a removed one at the border of a sealed region). A same-op
pair with a contradiction still pairs in tier 2: a node next to an inserted or removed one has
an edge to the edit that contradicts, yet pairing it costs less than an add and a remove.

Candidates are the unpaired neighbours of the stuck pairs, crossed, and one step further (the
nodes beyond an unpaired neighbour, for an inserted or removed node at the border).

An op change is never paired against a contradiction. Within a tier, candidates are ordered by
paired structure, then by the structure one step further (how many neighbours have the same op
in the same place), then by what the nodes carry (same stream, same attributes), then by name,
then by file position: names and positions only break ties. A candidate that shares its best
score with another candidate of the same node is *contested*: a guess. A round links the clear
candidates of the best tier among them, and contested ones only when no candidate in any tier is
clear.
"""

from __future__ import annotations

from collections import Counter

from airctl.diff.propagate import Pairing
from airctl.diff.sides import Side

STRUCTURE = 7  # the leading fields of a key that count paired neighbours (a unique best there is clear)
WIDE = 64  # above this many candidate pairs around one node, only same-op pairs are tried, in groups this small


def evidence_round(p: Pairing) -> int:
    """One round (see the module docstring); returns the number of pairs made."""
    scored = [k for k in (_key(p, x, y) for x, y in _candidates(p)) if k is not None]
    if not scored:
        return 0
    # each node's best score from paired neighbours (the key's first STRUCTURE fields); sharing it is contested
    best_x: dict[int, tuple] = {}
    best_y: dict[int, tuple] = {}
    ties: dict[tuple[int, int], int] = {}
    for k in scored:
        structure = k[:STRUCTURE]
        for best, node, side in ((best_x, k[-2], 0), (best_y, k[-1], 1)):
            old = best.get(node)
            if old is None or structure < old:
                best[node] = structure
                ties[(side, node)] = 1
            elif structure == old:
                ties[(side, node)] += 1
    clear = [k for k in scored if ties[(0, k[-2])] == 1 and ties[(1, k[-1])] == 1
             and k[:STRUCTURE] == best_x[k[-2]] == best_y[k[-1]]]
    pool = clear or scored  # a guess between equals only when nothing is clear, in any tier
    tier = min(k[0] for k in pool)
    a, b = p.a, p.b
    made = 0
    for k in sorted(k for k in pool if k[0] == tier):
        x, y = k[-2], k[-1]
        if a.pair[x] < 0 and b.pair[y] < 0 and _key(p, x, y) == k:  # scores change as pairs are made
            p.link(x, y, "evidence" if a.op[x] == b.op[y] else "same-place")
            made += 1
    return made


def _key(p: Pairing, x: int, y: int) -> tuple | None:
    """The sort key of candidate ``(x, y)``: tier, structure (lower is better), then what the nodes
    carry, name and position; None when it may not pair."""
    a, b = p.a, p.b
    agree_in, agree_out, agree_ctrl, in_slot, contra, bridged = _score(p, x, y)
    agree = agree_in + agree_out + agree_ctrl
    same = a.op[x] == b.op[y]
    one_sided = False
    if not same:  # an op changed in place: paired on both sides (where there are two), nothing against
        if contra or bridged or not agree:
            return None
        lacks_in = bool(a.data_in[x] or b.data_in[y]) and not agree_in
        lacks_out = bool(a.users[x] or b.users[y]) and not agree_out
        if lacks_in and lacks_out:
            return None
        if lacks_in or lacks_out:  # the walk has not reached that side: its ops must at least look alike
            if not looks_alike(p, x, y, inputs=lacks_in):
                return None
            one_sided = True
    # in half points: an agreeing neighbour 2, a bridged one 1, a contradicting one or an op change -2
    score = 2 * (agree - contra - (not same)) + bridged
    if same and not agree:  # only bridged: the other side's ops must look alike
        if contra or not bridged or not (looks_alike(p, x, y, inputs=True) or looks_alike(p, x, y, inputs=False)):
            return None
        one_sided = True
    tier = 0 if score >= 4 else 1 if score >= 2 else 2
    node_a, node_b = a.nodes[x], b.nodes[y]
    return (tier, -score, one_sided, not same, -agree, -bridged, -in_slot, -_alike_ops(p, x, y),
            node_a.stream != node_b.stream, a.attr_key(x) != b.attr_key(y), node_a.name != node_b.name,
            abs(x * b.n - y * a.n), x, y)


def _alike_ops(p: Pairing, x: int, y: int) -> int:
    """How many of ``x``'s neighbours have the op of ``y``'s in the same place (inputs by slot, users
    with the slot they read): the structure one step further, where pairs are not made yet."""
    a, b = p.a, p.b
    same = sum(1 for v, w in zip(a.data_in[x], b.data_in[y], strict=False) if v >= 0 and w >= 0 and a.op[v] == b.op[w])
    users_a, users_b = a.users[x], b.users[y]
    if len(users_a) > WIDE or len(users_b) > WIDE:
        return same
    mine = Counter(zip((a.op[u] for u in users_a), a.user_slot[x], strict=True))
    theirs = Counter(zip((b.op[v] for v in users_b), b.user_slot[y], strict=True))
    return same + sum((mine & theirs).values())


def _feeds(side: Side, ins: list[int], k: int, q: int) -> bool:
    """Input slot ``k`` holds an unpaired node (an inserted one) that reads ``q``."""
    w = ins[k] if k < len(ins) else -1
    return w >= 0 and side.pair[w] < 0 and q in side.data_in[w]


def _reads(side: Side, users: list[int], q: int, slot: int) -> bool:
    """An unpaired user (an inserted node) is read by ``q`` through input ``slot``."""
    pair, data_in = side.pair, side.data_in
    return any(pair[v] < 0 and slot < len(data_in[q]) and data_in[q][slot] == v for v in users)


def looks_alike(p: Pairing, x: int, y: int, inputs: bool) -> bool:
    """The ops of ``x``'s inputs (by slot) or users (with the slot they read) equal ``y``'s."""
    a, b = p.a, p.b
    if inputs:
        return [a.op[w] if w >= 0 else -1 for w in a.data_in[x]] == [b.op[w] if w >= 0 else -1 for w in b.data_in[y]]
    return (sorted(zip((a.op[u] for u in a.users[x]), a.user_slot[x], strict=True))
            == sorted(zip((b.op[v] for v in b.users[y]), b.user_slot[y], strict=True)))


def _unpaired(pair: list[int], nodes: list[int]) -> list[int]:
    return list(dict.fromkeys(x for x in nodes if x >= 0 and pair[x] < 0))


def _candidates(p: Pairing) -> dict[tuple[int, int], None]:
    """Unpaired neighbours of each stuck pair, crossed (inputs with inputs, users with users)."""
    a, b = p.a, p.b
    pa, pb = a.pair, b.pair
    out: dict[tuple[int, int], None] = {}
    for i in list(p.stuck):
        j = pa[i]
        open_ = False
        for lists_a, lists_b in ((a.data_in, b.data_in), (a.users, b.users), (a.ctrl_in, b.ctrl_in),
                                 (a.ctrl_users, b.ctrl_users)):
            xs, ys = _unpaired(pa, lists_a[i]), _unpaired(pb, lists_b[j])
            if not xs or not ys:
                continue
            open_ = True
            if len(xs) * len(ys) <= WIDE:
                out.update(((x, y), None) for x in xs for y in ys)
                if lists_a is a.data_in or lists_a is a.users:  # one step further: a node inserted or removed here
                    xs2 = [z for x in xs for z in _unpaired(pa, lists_a[x])][:8]
                    ys2 = [z for y in ys for z in _unpaired(pb, lists_b[y])][:8]
                    out.update(((x, y), None) for x in xs2 for y in ys)
                    out.update(((x, y), None) for x in xs for y in ys2)
                continue
            by_op: dict[int, tuple[list[int], list[int]]] = {}
            for x in xs:
                by_op.setdefault(a.op[x], ([], []))[0].append(x)
            for y in ys:
                group = by_op.get(b.op[y])
                if group is not None:
                    group[1].append(y)
            for gx, gy in by_op.values():  # a larger group (a mask read by every layer) is left to other paths
                if len(gx) * len(gy) <= WIDE:
                    out.update(((x, y), None) for x in gx for y in gy)
        if not open_:
            p.stuck.discard(i)
    return out


def _score(p: Pairing, x: int, y: int) -> tuple[int, int, int, int, int, int]:
    """Paired neighbours of ``x`` and ``y``: (agreeing inputs, agreeing users, agreeing control
    neighbours, inputs agreeing in the same slot, contradicting data neighbours, bridged ones).

    A paired neighbour of one that is two steps from the other through an unpaired node in the
    same slot (a node inserted or removed between them) is *bridged*, not contradicting.
    """
    a, b = p.a, p.b
    pa, pb = a.pair, b.pair
    agree_in = agree_out = in_slot = contra = bridged = 0
    ins_a, ins_b = a.data_in[x], b.data_in[y]
    left_b = list(ins_b)  # inputs of y not yet accounted for (a multiset: an input may be read twice)
    moved = []
    for k, w in enumerate(ins_a):
        q = pa[w] if w >= 0 else -1
        if q < 0:
            continue
        if k < len(ins_b) and ins_b[k] == q:
            in_slot += 1
            left_b[k] = -1
        else:
            moved.append((k, q))
    agree_in = in_slot
    for k, q in moved:  # read through another slot: still agrees (inputs reordered)
        if q in left_b:
            left_b[left_b.index(q)] = -1
            agree_in += 1
        elif _feeds(b, ins_b, k, q):
            bridged += 1
        else:
            contra += 1
    for k, w in enumerate(left_b):
        if w >= 0 and pb[w] >= 0:
            if _feeds(a, ins_a, k, pb[w]):
                bridged += 1
            else:
                contra += 1
    users_a, users_b = a.users[x], b.users[y]
    set_a, set_b = (set(users_a), set(users_b)) if len(users_a) > 8 or len(users_b) > 8 else (users_a, users_b)
    for u, slot in zip(users_a, a.user_slot[x], strict=True):
        q = pa[u]
        if q >= 0:
            if q in set_b:
                agree_out += 1
            elif _reads(b, users_b, q, slot):
                bridged += 1
            else:
                contra += 1
    for v, slot in zip(users_b, b.user_slot[y], strict=True):
        q = pb[v]
        if q >= 0 and q not in set_a:
            if _reads(a, users_a, q, slot):
                bridged += 1
            else:
                contra += 1
    ctrl_b = set(b.ctrl_in[y]) | set(b.ctrl_users[y])
    agree_ctrl = sum(1 for w in a.ctrl_in[x] + a.ctrl_users[x] if w >= 0 and pa[w] >= 0 and pa[w] in ctrl_b)
    return agree_in, agree_out, agree_ctrl, in_slot, contra, bridged

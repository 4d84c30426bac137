"""Grow a pairing along data edges from the pairs made so far: the matcher's workhorse.

From a paired node ``(i, j)`` the k-th input of ``i`` pairs with the k-th input of ``j``, and a user
of ``i`` pairs with the user of ``j`` that has the same op and reads ``i`` through the same input
slot, whenever that user is the only such one on both sides. Only nodes with the same op pair
here, so a chain of repeated layers is paired position by position from the graph's inputs and
outputs, and an edit (a changed op, an inserted or removed node) stops the walk right at the edit.

Each pair is expanded once (a work queue: only the frontier is touched). A paired node left with
an unpaired neighbour it could not resolve (different op, or several same-op users) is kept in
``Pairing.stuck``; the later rounds (:mod:`airctl.diff.evidence`) start from those nodes only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from airctl.diff.sides import Side


class Pairing:
    """The pairing being built: both sides, how each pair was found, the frontier and the stuck nodes."""

    def __init__(self, a: Side, b: Side) -> None:
        self.a, self.b = a, b
        self.how: dict[int, str] = {}  # a-side index -> rule
        self.queue: list[int] = []  # a-side nodes paired but not yet expanded
        self.stuck: set[int] = set()  # a-side paired nodes with unpaired neighbours propagation left alone
        self.left_a, self.left_b = a.n, b.n

    def link(self, i: int, j: int, how: str) -> None:
        self.a.pair[i] = j
        self.b.pair[j] = i
        self.how[i] = how
        self.queue.append(i)
        self.left_a -= 1
        self.left_b -= 1

    @property
    def done(self) -> bool:
        return not self.left_a or not self.left_b

    def link_unique(self, keyed_a: Iterable[tuple[Hashable, int]], keyed_b: Iterable[tuple[Hashable, int]],
                    how: str) -> int:
        """Pair each unpaired node whose key (``keyed_*``: (key, node) per candidate of a side) is its
        side's alone with the node alone with that key on the other side; returns the pairs made."""
        only_b = _alone(keyed_b)
        made = 0
        for key, i in _alone(keyed_a).items():
            j = only_b.get(key, -1)
            if i >= 0 and j >= 0 and self.a.pair[i] < 0 and self.b.pair[j] < 0:
                self.link(i, j, how)
                made += 1
        return made

    def retry_stuck(self) -> None:
        """Queue the stuck nodes again (pairs made since may have resolved their neighbours)."""
        self.queue.extend(self.stuck)
        self.stuck.clear()


def _alone(keyed: Iterable[tuple[Hashable, int]]) -> dict[Hashable, int]:
    """Key -> the one node with it, ``-1`` where several share it; keys in order of first use."""
    out: dict[Hashable, int] = {}
    for key, i in keyed:
        out[key] = -1 if key in out else i
    return out


def propagate(p: Pairing) -> int:
    """Expand every queued pair (see the module docstring); returns the number of pairs made.

    The hot loop of the diff: plain local lists and inlined links, no per-node allocation on the
    common path (one unpaired user on each side).
    """
    a, b = p.a, p.b
    pa, pb, opa, opb = a.pair, b.pair, a.op, b.op
    a_in, b_in, a_users, b_users, a_slot, b_slot = a.data_in, b.data_in, a.users, b.users, a.user_slot, b.user_slot
    a_ctrl_in, a_ctrl_users = a.ctrl_in, a.ctrl_users
    queue, how = p.queue, p.how
    pop, push, stuck = queue.pop, queue.append, p.stuck.add
    fits = fitter(p)
    made = 0
    while queue:
        i = pop()
        j = pa[i]
        ins_a = a_in[i]
        if ins_a:
            ins_b = b_in[j]
            if len(ins_a) != len(ins_b):
                stuck(i)
            for x, y in zip(ins_a, ins_b, strict=False):
                if x >= 0 and y >= 0 and pa[x] < 0 and pb[y] < 0:
                    if opa[x] == opb[y] and fits(x, y):
                        pa[x], pb[y], how[x] = y, x, "neighbours"
                        push(x)
                        made += 1
                    else:
                        stuck(i)
        us_a = a_users[i]
        if us_a:
            us_b = b_users[j]
            if len(us_a) == 1 and len(us_b) == 1:
                u, v = us_a[0], us_b[0]
                if pa[u] < 0:
                    if pb[v] < 0 and a_slot[i][0] == b_slot[j][0] and opa[u] == opb[v] and fits(u, v):
                        pa[u], pb[v], how[u] = v, u, "neighbours"
                        push(u)
                        made += 1
                    else:
                        stuck(i)
            else:
                groups: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
                for u, s in zip(us_a, a_slot[i], strict=True):
                    if pa[u] < 0:
                        groups.setdefault((opa[u], s), ([], []))[0].append(u)
                if groups:
                    for v, t in zip(us_b, b_slot[j], strict=True):
                        if pb[v] < 0:
                            group = groups.get((opb[v], t))
                            if group is not None:
                                group[1].append(v)
                    for xs, ys in groups.values():  # alone in its (op, slot) group on both sides
                        if len(xs) == 1 and len(ys) == 1:
                            u, v = xs[0], ys[0]
                            if pa[u] < 0 and pb[v] < 0 and fits(u, v):
                                pa[u], pb[v], how[u] = v, u, "neighbours"
                                push(u)
                                made += 1
                    if any(pa[u] < 0 for u in us_a):
                        stuck(i)
        if (a_ctrl_in[i] or a_ctrl_users[i]) and any(x >= 0 and pa[x] < 0 for x in a_ctrl_in[i] + a_ctrl_users[i]):
            stuck(i)
    p.left_a -= made
    p.left_b -= made
    return made


def fitter(p: Pairing) -> Callable[[int, int], bool]:
    """``fits(x, y)``: no paired neighbour of ``x`` contradicts ``y`` (paired inputs sit in the same
    slot, paired users are users of ``y``, and the other way round). A closure over the arrays: it
    runs once per pair made."""
    a, b = p.a, p.b
    pa, pb, a_in, b_in, a_users, b_users = a.pair, b.pair, a.data_in, b.data_in, a.users, b.users

    def fits(x: int, y: int) -> bool:
        for v, w in zip(a_in[x], b_in[y], strict=False):
            if (v >= 0 and pa[v] >= 0 and pa[v] != w) or (w >= 0 and pb[w] >= 0 and pb[w] != v):
                return False
        users_a, users_b = a_users[x], b_users[y]
        if len(users_a) > 8 or len(users_b) > 8:  # membership tests: sets for high fan-out nodes
            users_a, users_b = set(users_a), set(users_b)
        for u in users_a:
            q = pa[u]
            if q >= 0 and q not in users_b:
                return False
        for v in users_b:
            q = pb[v]
            if q >= 0 and q not in users_a:
                return False
        return True

    return fits

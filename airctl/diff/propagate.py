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

    def retry_stuck(self) -> None:
        """Queue the stuck nodes again (pairs made since may have resolved their neighbours)."""
        self.queue.extend(self.stuck)
        self.stuck.clear()


def propagate(p: Pairing) -> int:
    """Expand every queued pair (see the module docstring); returns the number of pairs made."""
    a, b = p.a, p.b
    pa, pb, opa, opb = a.pair, b.pair, a.op, b.op
    a_in, b_in, a_users, b_users, a_slot, b_slot = a.data_in, b.data_in, a.users, b.users, a.user_slot, b.user_slot
    a_ctrl_in, a_ctrl_users, b_ctrl_in, b_ctrl_users = a.ctrl_in, a.ctrl_users, b.ctrl_in, b.ctrl_users
    queue, stuck, link = p.queue, p.stuck, p.link
    made = 0
    while queue:
        i = queue.pop()
        j = pa[i]
        blocked = False
        ins_a, ins_b = a_in[i], b_in[j]
        for x, y in zip(ins_a, ins_b, strict=False):
            if x >= 0 and y >= 0 and pa[x] < 0 and pb[y] < 0:
                if opa[x] == opb[y] and fits(p, x, y):
                    link(x, y, "neighbours")
                    made += 1
                else:
                    blocked = True
        if len(ins_a) != len(ins_b):
            blocked = True
        us_a = a_users[i]
        if us_a:
            xs = [(u, s) for u, s in zip(us_a, a_slot[i], strict=True) if pa[u] < 0]
            if xs:
                ys = [(v, t) for v, t in zip(b_users[j], b_slot[j], strict=True) if pb[v] < 0]
                if len(xs) == 1 and len(ys) == 1:
                    (u, s), (v, t) = xs[0], ys[0]
                    if s == t and opa[u] == opb[v] and fits(p, u, v):
                        link(u, v, "neighbours")
                        made += 1
                    else:
                        blocked = True
                else:
                    made += _by_op_and_slot(p, xs, ys)
                    blocked = True
        if not blocked:  # an unpaired neighbour left on either side (control edges included)
            blocked = (any(pb[v] < 0 for v in b_users[j]) or any(x >= 0 and pa[x] < 0 for x in a_ctrl_in[i])
                       or any(pa[x] < 0 for x in a_ctrl_users[i]) or any(y >= 0 and pb[y] < 0 for y in b_ctrl_in[j])
                       or any(pb[y] < 0 for y in b_ctrl_users[j]))
        if blocked:
            stuck.add(i)
    return made


def _by_op_and_slot(p: Pairing, xs: list[tuple[int, int]], ys: list[tuple[int, int]]) -> int:
    """Pair the users that are alone on both sides in their (op, input slot) group."""
    pa, pb, opa, opb = p.a.pair, p.b.pair, p.a.op, p.b.op
    groups: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
    for u, s in xs:
        groups.setdefault((opa[u], s), ([], []))[0].append(u)
    for v, t in ys:
        group = groups.get((opb[v], t))
        if group is not None:
            group[1].append(v)
    made = 0
    for us, vs in groups.values():
        if len(us) == 1 and len(vs) == 1 and pa[us[0]] < 0 and pb[vs[0]] < 0 and fits(p, us[0], vs[0]):
            p.link(us[0], vs[0], "neighbours")
            made += 1
    return made


def fits(p: Pairing, x: int, y: int) -> bool:
    """No paired neighbour of ``x`` contradicts ``y``: paired inputs sit in the same slot, paired
    users are users of ``y`` (and the other way round)."""
    a, b = p.a, p.b
    pa, pb = a.pair, b.pair
    ins_b = b.data_in[y]
    for k, w in enumerate(a.data_in[x]):
        if w >= 0 and pa[w] >= 0 and (k >= len(ins_b) or ins_b[k] != pa[w]):
            return False
    ins_a = a.data_in[x]
    for k, w in enumerate(ins_b):
        if w >= 0 and pb[w] >= 0 and (k >= len(ins_a) or ins_a[k] != pb[w]):
            return False
    users_a, users_b = a.users[x], b.users[y]
    if len(users_a) > 8 or len(users_b) > 8:  # membership tests: sets for high fan-out nodes
        users_a, users_b = set(users_a), set(users_b)
    for u in users_a:
        if pa[u] >= 0 and pa[u] not in users_b:
            return False
    return all(pb[v] < 0 or pb[v] in users_a for v in users_b)

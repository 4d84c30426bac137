"""Happens-before between streams of an FX graph, with per-stream vector clocks.

Why vector clocks: a race check asks, for each cross-stream use, "is the producer ordered before
the consumer?". With one clock per stream (a tuple of K positions, K = number of streams) the
answer is one comparison, so a 50k-node graph costs O(n·K) instead of the O(n²) of reachability.

What orders work, per mode (reference/torchair.md §2.1, §2.2):

- both: program order on one stream; ``record`` → ``wait`` (everything before the record on its
  stream happens before everything after the wait on the waiting stream). A wait on a plain tensor
  orders after its producer (aclgraph inserts a record right after it; GE takes the producer op
  as the controller).
- reduce-overhead: TorchAir's closure events fork every stream scope from the graph start (graph
  inputs are visible to every stream) and join every stream scope's work before ``output``.
  Cross-stream data edges are *not* synchronised.
- max-autotune: GE synchronises cross-stream data edges, so a data edge is itself an ordering;
  records GE drops (R7, ``no_op_before_record``) order nothing. Orderings that exist only through
  node order (an in-place write and a read of the same tensor on another stream) are not synced.

Races reported: a cross-stream read of a value with no ordering (reduce-overhead), and in both
modes an in-place write and a read/write of the same tensor on different streams with no ordering.

The same walk says whether some node uses one at or after it (``HappensBefore.backward``): only then
can the graph have a cycle, which the verifier then looks for (:mod:`airctl.verify.cycles`), and its
clocks are set aside. One walk over the inputs instead of two (200k nodes: 0.1 s).
"""

from __future__ import annotations

from functools import lru_cache
from operator import ge

from airctl.graph.model import Node, stream_word
from airctl.graph.roles import Role
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.plan import FxPlan
from airctl.verify.rules import make_finding

# A stamp says where a node ran: ``(sid, pos, clock)``, the stream id, the node's 1-based position
# on that stream, and the stream's clock then. The walk keeps the three in lists by node position and
# makes the tuple only for a cross-stream use (a NamedTuple's constructor would be a Python call).
Stamp = tuple[int, int, tuple[int, ...]]


@lru_cache(maxsize=4096)
def is_inplace(op: str) -> bool:
    """``aten.add_.Tensor`` / ``aten.copy_.default``: ATen's trailing-underscore in-place naming."""
    parts = op.split(".")
    if len(parts) < 2 or parts[0] == "air":
        return False
    base = parts[1]
    return base.endswith("_") and not base.endswith("__")


# how an in-place hazard's message ends, here and at run time (airctl.execute.hazards)
INPLACE_HAZARD = (", with no record/wait ordering them (an in-place hazard: no data edge connects them, so not even GE "
                  "synchronises it)")


def unordered_read_why(mode: Mode, npugraph_ex: bool = False) -> str:
    """Why a cross-stream read that no record/wait orders is a race under ``mode`` (the words of both
    this check's findings and the executor's races, :mod:`airctl.execute.hazards`)."""
    if not mode.is_aclgraph:
        return "nothing orders them"
    named = "npugraph_ex (aclgraph)" if npugraph_ex else "reduce-overhead"
    return f"{named} adds no synchronisation for cross-stream data edges"


class HappensBefore:
    def __init__(self, plan: FxPlan, dropped_records: set[str] | None = None) -> None:
        self.plan = plan
        self.mode = plan.mode
        self.syncs_data_edges = plan.mode.meaning.syncs_data_edges  # GE: every cross-stream data edge ordered
        self.dropped = dropped_records or set()
        labels: dict[str | None, int] = {None: 0}
        for s in dict.fromkeys(plan.stream):  # each label once, in order of first use
            labels.setdefault(s, len(labels))
        self.labels = list(labels)
        self.sid = labels
        k = len(labels)
        self.clock: list[tuple[int, ...]] = [(0,) * k for _ in range(k)]
        self.pos = [0] * k
        # a node's stamp, kept by node position in three lists (its stream, its position there, 0 until
        # the walk has passed it, and the stream's clock then): no tuple per node, no second name table
        self.sids: list[int] = []
        self.at: list[int] = []
        self.clocks: list[tuple[int, ...] | None] = []
        self._by_name: tuple[list[int], list[int], list] = (self.sids, self.at, self.clocks)
        # set by run(): whether some node uses a node at or after it, or has a control input. Only then
        # can the graph have a cycle (else every edge, data, sync and stream order, points forward)
        self.backward = False
        self.findings: list[Finding] = []
        self._raced: set[tuple[str, str]] = set()
        # only tensors some node writes in place need reader/writer tracking
        inplace = {op for op in plan.ops if is_inplace(op)}
        self.mutated = {n.inputs[0] for n in plan.nodes if n.inputs and n.op in inplace} if inplace else set()

    # -- clock algebra ----------------------------------------------------------------------------
    def ordered(self, before: Stamp, sid: int) -> bool:
        """Whether ``before`` happens before the next node on stream ``sid``."""
        if before[0] == sid:
            return before[1] <= self.pos[sid]
        return self.clock[sid][before[0]] >= before[1]

    def merge(self, sid: int, stamp: Stamp) -> None:
        """Stream ``sid`` now knows everything ``stamp`` knew, and ``stamp``'s node itself."""
        cur = self.clock[sid]
        ssid, spos, sclock = stamp
        if ssid != sid and cur[ssid] >= spos and (sclock is cur or all(map(ge, cur, sclock))):
            return  # already known
        new = list(map(max, cur, sclock))
        if spos > new[ssid]:
            new[ssid] = spos
        self.clock[sid] = tuple(new)

    def _merge_clock(self, sid: int, clock: tuple[int, ...]) -> None:
        self.clock[sid] = tuple(map(max, self.clock[sid], clock))

    # -- walk -------------------------------------------------------------------------------------
    def run(self) -> list[Finding]:
        """One walk in node order. Most nodes are ops that read values already on their own stream
        or, under max-autotune, across streams (a merge): those take the short path in the loop;
        waits, scope exits, the output and nodes touching a tensor written in place take the rest.
        A node's stamp is kept at its position, found through the plan's name index; where names repeat,
        also at the position of the name's last node, so a name finds the stamp of its latest node walked
        (as a name-keyed table would)."""
        plan = self.plan
        nodes, roles, index = plan.nodes, plan.roles, plan.index
        clock, pos, mutated = self.clock, self.pos, self.mutated
        n = len(nodes)
        sids = self.sids = list(map(self.sid.__getitem__, plan.stream))
        at = self.at = [0] * n  # position on its stream; 0: not walked yet, or a graph input
        clocks = self.clocks = [None] * n
        if len(index) == n:
            slots = None
            s_sid, s_at, s_clock = sids, at, clocks
        else:  # repeated names: stamps by name at the slot of the name's last node, apart from the per-node lists
            slots = [index[node.name] for node in nodes]
            s_sid, s_at, s_clock = [0] * n, [0] * n, [None] * n
        self._by_name = (s_sid, s_at, s_clock)
        get = index.get
        exit_scope = {s.exit: s for s in plan.scopes if s.exit is not None}
        joins: list[tuple[int, ...]] = []  # reduce-overhead: clocks of stream scopes at their exit
        last_writer: dict[str, tuple[str, Stamp]] = {}
        last_readers: dict[str, dict[int, tuple[str, Stamp]]] = {}
        output_clock: tuple[int, ...] | None = None
        output_at: int | None = None
        ro = self.mode.is_aclgraph
        ma = self.mode.is_ge
        later = self._later
        backward = False  # some node uses one at or after it (see ``backward``)
        for i, node, role, b in zip(range(n), nodes, roles, sids, strict=True):
            if node.control_inputs:
                backward = True  # rare in FX: the cycle test decides
            if role is _INPUT:
                backward = backward or (bool(node.inputs) and later(node.inputs, i))
                continue  # graph inputs: visible on every stream (fork at graph start / GE data edge)
            if role is not _OP and role is not _WAIT and not backward and node.inputs:
                backward = later(node.inputs, i)
            if role is _WAIT:
                targets = _wait_targets(node)
                # the usual wait names its records as its inputs too: the lookups below then also serve
                # the backward test; else its inputs are looked up on their own
                same = node.inputs == targets
                if not same and not backward and node.inputs:
                    backward = later(node.inputs, i)
                for name in targets:
                    j = get(name)
                    if j is None:
                        backward = backward or (same and later((name,), i))
                        continue
                    if same and j >= i:
                        backward = True
                    if s_at[j] and not (ma and name in self.dropped):
                        self.merge(b, (s_sid[j], s_at[j], s_clock[j]))
            elif role is _EXIT:
                scope = exit_scope.get(i) if ro else None
                if scope is not None and scope.label is not None:
                    vc = list(clock[b])
                    vc[b] = pos[b]
                    joins.append(tuple(vc))  # tagged_event_record before the exit ...
            elif role is _ENTER:
                pass
            elif role is _OUTPUT or (mutated and (is_inplace(node.op) or not mutated.isdisjoint(node.inputs))):
                if role is _OP and not backward:
                    backward = later(node.inputs, i)
                if role is _OUTPUT and ro:
                    for vc in joins:  # ... and its tagged_event_wait before the output
                        self._merge_clock(b, vc)
                self._uses(node, b, last_writer, last_readers)
                if role is _OUTPUT:
                    vc = list(clock[b])
                    vc[b] = pos[b]
                    output_clock = tuple(vc)
                    output_at = i if output_at is None else output_at
            else:  # _uses, for a node no in-place write concerns: reads only
                for name in node.inputs:
                    j = get(name)
                    if j is None:
                        backward = backward or later((name,), i)  # a "name:0" reference: its producer's
                        continue  # no such node
                    if j >= i:
                        backward = True
                    s = s_sid[j]
                    if s == b or not s_at[j]:
                        continue  # program order, or a graph input or forward reference
                    if ma:  # GE synchronises cross-stream data edges: merge, unless already known
                        cur = clock[b]
                        if cur[s] < s_at[j] or not (s_clock[j] is cur or all(map(ge, cur, s_clock[j]))):
                            self.merge(b, (s, s_at[j], s_clock[j]))
                    elif clock[b][s] < s_at[j]:
                        self._race(name, node.name, s, b, kind="read")
            p = at[i] = pos[b] = pos[b] + 1
            clocks[i] = clock[b]
            if slots is not None:
                k = slots[i]
                s_sid[k], s_at[k], s_clock[k] = b, p, clock[b]
        self.backward = backward
        if output_clock is not None:
            self._joins(output_clock, nodes[output_at].name if output_at is not None else "output")
        return self.findings

    def _later(self, refs: list[str] | tuple[str, ...], i: int) -> bool:
        """Whether one of node ``i``'s input references names a node at or after it (by its producer's
        name when the reference is not a node's name)."""
        get = self.plan.index.get
        for ref in refs:
            j = get(ref)
            if j is None:
                j = get(Node.producer(ref))
            if j is not None and j >= i:
                return True
        return False

    def _stamp(self, name: str) -> Stamp | None:
        """The stamp of the latest node walked with this name, None if there is none."""
        j = self.plan.index.get(name)
        s_sid, s_at, s_clock = self._by_name
        return None if j is None or not s_at[j] else (s_sid[j], s_at[j], s_clock[j])

    def _uses(self, node, b: int, last_writer: dict, last_readers: dict) -> None:  # noqa: ANN001
        seen: set[str] = set()
        for name in node.inputs:
            if name in seen:
                continue
            seen.add(name)
            st = self._stamp(name)
            if st is None:
                continue  # graph input, or a forward reference (deadlock_cycle reports those)
            if st[0] != b:
                if self.syncs_data_edges:
                    self.merge(b, st)  # GE synchronises cross-stream data edges
                elif not self.ordered(st, b):
                    self._race(name, node.name, st[0], b, kind="read")
            if name in self.mutated:
                w = last_writer.get(name)
                if w is not None and w[1][0] != b and w[0] != node.name and not self.ordered(w[1], b):
                    self._race(w[0], node.name, w[1][0], b, kind="write-read", tensor=name)
        if not self.mutated:
            return
        if is_inplace(node.op) and node.inputs:
            target = node.inputs[0]
            for c, (rname, rst) in last_readers.get(target, {}).items():
                if c != b and rname != node.name and not self.ordered(rst, b):
                    self._race(rname, node.name, c, b, kind="read-write", tensor=target)
            w = last_writer.get(target)
            if w is not None and w[1][0] != b and not self.ordered(w[1], b):
                self._race(w[0], node.name, w[1][0], b, kind="write-write", tensor=target)
            # the write lands when this node runs: stamp it as the next position on b
            last_writer[target] = (node.name, (b, self.pos[b] + 1, self.clock[b]))
        for name in seen:
            if name in self.mutated:
                last_readers.setdefault(name, {})[b] = (node.name, (b, self.pos[b] + 1, self.clock[b]))

    def _race(self, first: str, second: str, a: int, b: int, *, kind: str, tensor: str | None = None) -> None:
        key = (first, second)
        if key in self._raced:
            return
        self._raced.add(key)
        sa, sb = stream_word(self.labels[a]), stream_word(self.labels[b])
        if kind == "read":
            why = unordered_read_why(self.mode)
            msg = f"{second} on {sb} reads {first} produced on {sa}, with no record/wait ordering them ({why})"
        else:
            what = {"write-read": f"{first} writes {tensor} in place on {sa}; {second} on {sb} uses it",
                    "read-write": f"{first} on {sa} reads {tensor}; {second} on {sb} then writes it in place",
                    "write-write": f"{first} on {sa} and {second} on {sb} both write {tensor} in place"}[kind]
            msg = what + INPLACE_HAZARD
        from airctl.passes.fix import wait_hint

        # the first few races get the YAML (selectors are matched over the graph), the rest the words
        hint = wait_hint(self.plan.graph, first, second, yaml=len(self.findings) < _YAML_HINTS)
        f = make_finding("race_cross_stream_without_wait", self.mode, msg, [first, second], self.plan.graph, hint=hint)
        if f is not None:
            consumer = self.plan.graph.get(second)
            f.source = consumer.source if consumer is not None and consumer.source else f.source  # where the wait goes
            self.findings.append(f)

    def _joins(self, output_clock: tuple[int, ...], out_name: str) -> None:
        """Side-stream ops (outside unclosed scopes) that the output's clock does not cover. Positions
        grow in node order on each stream, so those are each stream's last nodes: a walk back from the
        end that leaves a stream at its first node the output covers."""
        roles, in_unclosed, sids, at = self.plan.roles, self.plan.in_unclosed, self.sids, self.at
        open_ = set(range(1, len(self.pos)))  # side streams whose covered part is not reached yet
        late: dict[int, list[int]] = {}
        i = len(roles)
        while open_ and i:
            i -= 1
            sid = sids[i]
            if sid not in open_ or roles[i] is _INPUT:
                continue
            if at[i] <= output_clock[sid]:
                open_.discard(sid)
            elif (roles[i] is _OP or roles[i].is_op) and not in_unclosed[i]:
                late.setdefault(sid, []).append(i)
        nodes = self.plan.nodes
        for sid in range(1, len(self.pos)):
            late_names = [nodes[k].name for k in reversed(late.get(sid, ()))]
            if not late_names:
                continue
            shown = ", ".join(late_names[:5]) + (f" and {len(late_names) - 5} more" if len(late_names) > 5 else "")
            f = make_finding("stream_not_joined", self.mode,
                             f"{shown} on {stream_word(self.labels[sid])} {'is' if len(late_names) == 1 else 'are'} "
                             f"not ordered before {out_name}: no data path, control edge or record/wait reaches it",
                             [*late_names[:20], out_name], self.plan.graph)
            if f is not None:
                self.findings.append(f)


_INPUT, _OP, _WAIT, _OUTPUT = Role.INPUT, Role.OP, Role.WAIT, Role.OUTPUT
_ENTER, _EXIT = Role.SCOPE_ENTER, Role.SCOPE_EXIT
_YAML_HINTS = 3  # races per graph whose hint carries the pass file's YAML


def _wait_targets(node) -> list[str]:  # noqa: ANN001
    args = node.attrs.get("args")
    if not isinstance(args, (list, tuple)):
        args = ()
    if args and isinstance(args[0], (list, tuple)):
        return [a[1:] for a in args[0] if isinstance(a, str) and len(a) > 1 and a[0] == "%"]  # plan.ref_name
    if not args and "args" not in node.attrs:
        return list(node.inputs)
    return []

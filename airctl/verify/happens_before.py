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
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache
from operator import ge

from airctl.graph.roles import Role
from airctl.modes import MAX_AUTOTUNE, REDUCE_OVERHEAD
from airctl.verify.findings import Finding
from airctl.verify.plan import FxPlan
from airctl.verify.rules import make_finding

# A stamp says where a node ran: ``(sid, pos, clock)``, the stream id, the node's 1-based position
# on that stream, and the stream's clock then. A plain tuple: one is made per node, and a plain
# tuple is the cheapest object Python makes (a NamedTuple's constructor is a Python call).
Stamp = tuple[int, int, tuple[int, ...]]


@lru_cache(maxsize=4096)
def is_inplace(op: str) -> bool:
    """``aten.add_.Tensor`` / ``aten.copy_.default``: ATen's trailing-underscore in-place naming."""
    parts = op.split(".")
    if len(parts) < 2 or parts[0] == "air":
        return False
    base = parts[1]
    return base.endswith("_") and not base.endswith("__")


def unordered_read_why(mode: str, npugraph_ex: bool = False) -> str:
    """Why a cross-stream read that no record/wait orders is a race under ``mode`` (the words of both
    this check's findings and the executor's races, :mod:`airctl.execute.hazards`)."""
    if mode != REDUCE_OVERHEAD:
        return "nothing orders them"
    named = "npugraph_ex (aclgraph)" if npugraph_ex else "reduce-overhead"
    return f"{named} adds no synchronisation for cross-stream data edges"


class HappensBefore:
    def __init__(self, plan: FxPlan, dropped_records: set[str] | None = None) -> None:
        self.plan = plan
        self.mode = plan.mode
        self.dropped = dropped_records or set()
        labels: dict[str | None, int] = {None: 0}
        for s in dict.fromkeys(plan.stream):  # each label once, in order of first use
            labels.setdefault(s, len(labels))
        self.labels = list(labels)
        self.sid = labels
        k = len(labels)
        self.clock: list[tuple[int, ...]] = [(0,) * k for _ in range(k)]
        self.pos = [0] * k
        self.stamps: dict[str, Stamp] = {}
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
        waits, scope exits, the output and nodes touching a tensor written in place take the rest."""
        plan = self.plan
        nodes, roles, streams, in_unclosed = plan.nodes, plan.roles, plan.stream, plan.in_unclosed
        sid_of, clock, pos, stamps, mutated = self.sid, self.clock, self.pos, self.stamps, self.mutated
        exit_scope = {s.exit: s for s in plan.scopes if s.exit is not None}
        joins: list[tuple[int, ...]] = []  # reduce-overhead: clocks of stream scopes at their exit
        work: dict[int, list[tuple[int, str]]] = {sid: [] for sid in range(1, len(pos))}  # per side stream: (pos, name)
        last_writer: dict[str, tuple[str, Stamp]] = {}
        last_readers: dict[str, dict[int, tuple[str, Stamp]]] = {}
        output_clock: tuple[int, ...] | None = None
        ro = self.mode == REDUCE_OVERHEAD
        ma = self.mode == MAX_AUTOTUNE
        for i, node in enumerate(nodes):
            role = roles[i]
            if role is _INPUT:
                continue  # graph inputs: visible on every stream (fork at graph start / GE data edge)
            b = sid_of[streams[i]]
            if role is _WAIT:
                for name in _wait_targets(node):
                    st = stamps.get(name)
                    if st is not None and not (ma and name in self.dropped):
                        self.merge(b, st)
            elif role is _EXIT:
                scope = exit_scope.get(i) if ro else None
                if scope is not None and scope.label is not None:
                    vc = list(clock[b])
                    vc[b] = pos[b]
                    joins.append(tuple(vc))  # tagged_event_record before the exit ...
            elif role is _ENTER:
                pass
            elif role is _OUTPUT or (mutated and (is_inplace(node.op) or not mutated.isdisjoint(node.inputs))):
                if role is _OUTPUT and ro:
                    for vc in joins:  # ... and its tagged_event_wait before the output
                        self._merge_clock(b, vc)
                self._uses(node, b, last_writer, last_readers)
                if role is _OUTPUT:
                    vc = list(clock[b])
                    vc[b] = pos[b]
                    output_clock = tuple(vc)
            else:  # _uses, for a node no in-place write concerns: reads only
                for name in node.inputs:
                    st = stamps.get(name)
                    if st is None or st[0] == b:
                        continue  # graph input, forward reference, or program order
                    if ma:  # GE synchronises cross-stream data edges: merge, unless already known
                        cur = clock[b]
                        if cur[st[0]] < st[1] or not (st[2] is cur or all(map(ge, cur, st[2]))):
                            self.merge(b, st)
                    elif clock[b][st[0]] < st[1]:
                        self._race(name, node.name, st[0], b, kind="read")
            p = pos[b] = pos[b] + 1
            stamps[node.name] = (b, p, clock[b])
            if b and (role is _OP or role.is_op) and not in_unclosed[i]:
                work[b].append((p, node.name))
        if output_clock is not None:
            self._joins(work, output_clock)
        return self.findings

    def _uses(self, node, b: int, last_writer: dict, last_readers: dict) -> None:  # noqa: ANN001
        seen: set[str] = set()
        for name in node.inputs:
            if name in seen:
                continue
            seen.add(name)
            st = self.stamps.get(name)
            if st is None:
                continue  # graph input, or a forward reference (deadlock_cycle reports those)
            if st[0] != b:
                if self.mode == MAX_AUTOTUNE:
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
        sa, sb = _stream_word(self.labels[a]), _stream_word(self.labels[b])
        if kind == "read":
            why = unordered_read_why(self.mode)
            msg = f"{second} on {sb} reads {first} produced on {sa}, with no record/wait ordering them ({why})"
        else:
            what = {"write-read": f"{first} writes {tensor} in place on {sa}; {second} on {sb} uses it",
                    "read-write": f"{first} on {sa} reads {tensor}; {second} on {sb} then writes it in place",
                    "write-write": f"{first} on {sa} and {second} on {sb} both write {tensor} in place"}[kind]
            msg = (f"{what}, with no record/wait ordering them (an in-place hazard: no data edge connects them, "
                   f"so not even GE synchronises it)")
        from airctl.passes.fix import wait_hint

        # the first few races get the YAML (selectors are matched over the graph), the rest the words
        hint = wait_hint(self.plan.graph, first, second, yaml=len(self.findings) < _YAML_HINTS)
        f = make_finding("race_cross_stream_without_wait", self.mode, msg, [first, second], self.plan.graph, hint=hint)
        if f is not None:
            consumer = self.plan.graph.get(second)
            f.source = consumer.source if consumer is not None and consumer.source else f.source  # where the wait goes
            self.findings.append(f)

    def _joins(self, work: dict[int, list[tuple[int, str]]], output_clock: tuple[int, ...]) -> None:
        roles = self.plan.roles
        out_name = self.plan.nodes[roles.index(_OUTPUT)].name if _OUTPUT in roles else "output"
        for sid, items in work.items():
            seen_upto = output_clock[sid]
            cut = bisect_right([p for p, _ in items], seen_upto)
            late = [name for _, name in items[cut:]]
            if not late:
                continue
            shown = ", ".join(late[:5]) + (f" and {len(late) - 5} more" if len(late) > 5 else "")
            f = make_finding("stream_not_joined", self.mode,
                             f"{shown} on {_stream_word(self.labels[sid])} {'is' if len(late) == 1 else 'are'} "
                             f"not ordered before {out_name}: no data path, control edge or record/wait reaches it",
                             [*late[:20], out_name], self.plan.graph)
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


def _stream_word(label: str | None) -> str:
    return "the default stream" if label is None else f"stream {label!r}"

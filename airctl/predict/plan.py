"""The graph that runs, as a replay sees it: tasks in program order per stream, and what each waits for.

A prediction replays *the plan*, not the model, so this is all it needs to know of a graph
(docs/profile.md "Predicted profiles" states the model):

- every node is a task on one stream, in the graph's program order on that stream; a task takes
  device time when it is a **kernel**, none when it is a **marker** (record, wait, TorchAir's tagged
  closure events: shown on the timeline) or **free** (inputs, the output, scope markers, ``getitem``,
  view ops and GE's ``Data``/``Const``/``NetOutput``: no kernel is launched for them);
- ``after`` lists the orderings *across* streams that the mode really gives:

  - aclgraph (reduce-overhead, npugraph_ex; the last FX stage, after TorchAir's own passes): a
    ``wait`` on its records (on a plain tensor: its producer, as aclgraph records right after it),
    a ``tagged_event_wait`` on the latest earlier ``tagged_event_record`` of its tag, a
    ``wait_tensor`` on its dependency. A cross-stream data edge is *not* an ordering (that is a
    race, which ``airctl check`` reports); the replay does not wait for it;
  - max-autotune (the last GE graph): control edges (``^op``: TorchAir's record/wait) and every
    cross-stream data edge (GE inserts an event for it). Collectives GE puts on a stream of their
    own (design.md "What GE does with streams by itself"); user labels are kept.

:func:`plan_from_timeline` builds the same plan from a measured timeline (a torch_npu profile):
its tasks per stream in start order and its event edges, so that replaying the measured plan can
be checked against what was measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airctl.execute.timeline import DEFAULT_STREAM, Timeline
from airctl.graph.model import Graph, Node
from airctl.graph.order import predecessors, topological
from airctl.graph.roles import Role, collective_kind, role_of
from airctl.modes import Mode
from airctl.verify.plan import build_plan, node_args, ref_name

KERNEL, MARKER, FREE = "kernel", "marker", "free"
COMM_STREAM = "hccl"  # where GE runs a collective that no user label placed

# ATen ops that launch no kernel: they only change a tensor's view (docs/profile.md lists them)
VIEW_OPS = frozenset({
    "view", "_unsafe_view", "reshape", "t", "transpose", "permute", "expand", "squeeze", "unsqueeze", "slice",
    "select", "alias", "as_strided", "detach", "unbind", "split", "split_with_sizes", "chunk", "narrow",
    "view_as", "expand_as", "lift_fresh", "lift_fresh_copy", "_reshape_alias", "unflatten", "flatten",
})
# GE ops that launch no task: inputs, outputs, constants, and shape-only ops (a reshape of a
# contiguous tensor changes its descriptor, not its memory)
GE_FREE = frozenset({"Data", "Const", "Constant", "NetOutput", "Variable", "RefData", "NoOp", "Reshape", "Identity",
                     "Unsqueeze", "Squeeze", "ExpandDims", "Flatten"})


@dataclass
class Task:
    index: int
    name: str
    op: str
    stream: str
    kind: str  # KERNEL, MARKER or FREE
    source: str | None = None
    module: str | None = None
    after: list[tuple[int, str]] = field(default_factory=list)  # (task index, sync kind) on other streams
    aliases: tuple[str, ...] = ()  # other names a TIMES row may use (a GE op's FX nodes)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class ReplayPlan:
    graph: str
    mode: Mode | str  # the graph's Mode; for dialect "profile", its timeline's label (npu-profile, or a Mode's value)
    dialect: str  # "fx", "ge" or "profile"
    tasks: list[Task]
    notes: list[str] = field(default_factory=list)
    stage: str | None = None  # the ledger stage it was read from
    graph_model: Graph | None = field(default=None, repr=False, compare=False)  # the graph it was read from

    @property
    def compiled(self) -> Mode | None:
        """The mode the plan's graph was compiled in; None for a measured profile labelled otherwise (npu-profile)."""
        return Mode.lookup(self.mode)

    @property
    def aclgraph(self) -> bool:
        """A plan of aclgraph's semantics: replayed as one captured graph (no per-kernel host launch)."""
        return self.compiled is not None and self.compiled.is_aclgraph

    def streams(self) -> list[str]:
        seen: dict[str, None] = {DEFAULT_STREAM: None} if any(t.stream == DEFAULT_STREAM for t in self.tasks) else {}
        for t in self.tasks:
            seen.setdefault(t.stream, None)
        return list(seen)

    def kernels(self) -> list[Task]:
        return [t for t in self.tasks if t.kind == KERNEL]


def is_view_op(op: str) -> bool:
    """``aten.view.default`` -> True: a view launches no kernel.

    >>> is_view_op("aten.view.default"), is_view_op("aten.mm.default"), is_view_op("getitem")
    (True, False, True)
    """
    if op in ("getitem", "_operator.getitem", "operator.getitem"):
        return True
    parts = op.split(".")
    return len(parts) >= 2 and parts[0] == "aten" and parts[1] in VIEW_OPS


def plan_from_graph(graph: Graph, mode: Mode, stage: str | None = None) -> ReplayPlan:
    """The replay plan of ``graph`` (FX or GE dialect) under ``mode``."""
    if graph.dialect == "ge":
        return _from_ge(graph, stage)
    return _from_fx(graph, mode, stage)


def _from_fx(graph: Graph, mode: Mode, stage: str | None) -> ReplayPlan:
    mode = Mode.parse(mode)
    aclgraph = mode.is_aclgraph
    fx_plan = build_plan(graph, mode)
    index = fx_plan.index
    tasks: list[Task] = []
    last_tag: dict[str, int] = {}
    notes: list[str] = []
    for i, node in enumerate(graph.nodes):
        role = fx_plan.roles[i]
        stream = fx_plan.stream[i] or DEFAULT_STREAM
        task = Task(i, node.name, node.op, str(stream), _fx_kind(node, role), node.source, node.module,
                    meta=dict(node.meta))
        tasks.append(task)
        if role is Role.WAIT:
            task.after.extend((j, "record_wait") for j in _wait_targets(node, index))
        elif role is Role.WAIT_TENSOR:
            args = node_args(node)
            dep = ref_name(args[1]) if len(args) > 1 else None
            if dep in index:
                task.after.append((index[dep], "data"))
        elif role in (Role.TAGGED_RECORD, Role.TAGGED_WAIT):
            tag = _tag(node)
            if role is Role.TAGGED_RECORD:
                last_tag[tag] = i
            elif tag in last_tag:
                task.after.append((last_tag[tag], _closure_kind(tasks[last_tag[tag]].stream, task.stream)))
            else:
                notes.append(f"{node.name} waits for tag {tag!r} that no earlier node records: it waits for nothing")
        if not aclgraph and role is Role.OP:
            for ref in dict.fromkeys(node.inputs):
                j = index.get(Node.producer(ref))
                if j is not None and j < i:
                    task.after.append((j, "data"))  # GE synchronises cross-stream data edges
    keep_cross_stream(tasks)
    return ReplayPlan(graph.name, mode, "fx", tasks, notes, stage, graph)


def order_cross_stream_reads(tasks: list[Task], graph: Graph) -> None:
    """Order every read of ``graph`` from another stream after its producer (``after`` += ``(j, "data")``):
    what GE's events give a cross-stream data edge, and what the waits ``passes fix`` writes give a race."""
    index = {t.name: t.index for t in tasks}
    for node in graph.nodes:
        i = index.get(node.name)
        if i is None:
            continue
        for ref in node.inputs:
            j = index.get(Node.producer(ref)) if ref else None
            if j is not None and j < i and tasks[j].stream != tasks[i].stream and (j, "data") not in tasks[i].after:
                tasks[i].after.append((j, "data"))


def _fx_kind(node: Node, role: Role) -> str:
    if role in (Role.RECORD, Role.WAIT, Role.TAGGED_RECORD, Role.TAGGED_WAIT, Role.STREAM_TAG, Role.WAIT_TENSOR):
        return MARKER
    if role is Role.OP and not is_view_op(node.op):
        return KERNEL
    return FREE


def _wait_targets(node: Node, index: dict[str, int]) -> list[int]:
    args = node_args(node)
    seq = args[0] if args and isinstance(args[0], (list, tuple)) else (node.attrs.get("kwargs") or {}).get("x", [])
    names = [ref_name(a) for a in seq] if isinstance(seq, (list, tuple)) else []
    if not any(names):
        names = [Node.producer(r) for r in node.inputs]
    return [index[n] for n in names if n in index]


def _tag(node: Node) -> str:
    args = node_args(node)
    kwargs = node.attrs.get("kwargs") or {}
    return str(args[0]) if args else str(kwargs.get("tag", kwargs.get("event_tag", "")))


def _closure_kind(src: str, dst: str) -> str:
    if src == DEFAULT_STREAM and dst != DEFAULT_STREAM:
        return "fork"
    if src != DEFAULT_STREAM and dst == DEFAULT_STREAM:
        return "join"
    return "event"


def keep_cross_stream(tasks: list[Task]) -> None:
    """Drop orderings within one stream (program order gives them) and duplicates."""
    for t in tasks:
        t.after = list(dict.fromkeys((j, k) for j, k in t.after if tasks[j].stream != t.stream))


def _from_ge(graph: Graph, stage: str | None) -> ReplayPlan:
    order = _ge_program_order(graph)
    nodes = [graph.nodes[i] for i in order]
    index = {n.name: k for k, n in enumerate(nodes)}
    tasks: list[Task] = []
    for k, node in enumerate(nodes):
        stream = node.stream or (COMM_STREAM if collective_kind(node.op) else DEFAULT_STREAM)
        kind = FREE if node.op in GE_FREE or role_of(node) in (Role.INPUT, Role.OUTPUT) else KERNEL
        fx_names = tuple(node.fx_nodes())
        task = Task(k, node.name, node.op, str(stream), kind, node.source, node.module, aliases=fx_names,
                    meta=dict(node.meta))
        for ref in node.control_inputs:
            j = index.get(Node.producer(ref))
            if j is not None:
                task.after.append((j, "record_wait"))
        for ref in node.inputs:
            j = index.get(Node.producer(ref)) if ref else None
            if j is not None:
                task.after.append((j, "data"))
        tasks.append(task)
    keep_cross_stream(tasks)
    return ReplayPlan(graph.name, Mode.MAX_AUTOTUNE, "ge", tasks, [], stage, graph)


def _ge_program_order(graph: Graph) -> list[int]:
    """A topological order of the GE graph, the dumped order wherever it already is one; what a cycle leaves
    is kept in dumped order after it (the replay reports the deadlock)."""
    order, stuck = topological(predecessors(graph))
    return order + stuck


def plan_from_timeline(timeline: Timeline, step: int) -> tuple[ReplayPlan, list[float]]:
    """The plan a measured step ran (tasks per stream in start order, its event edges) and each
    task's measured duration in µs."""
    from airctl.profile import events as ev

    events = ev.step_events(timeline, step)
    t0 = min((e.start_s for e in events), default=0.0)
    facts = timeline.facts
    where = {id(e): k for k, e in enumerate(timeline.events)} if facts is not None else {}
    tasks: list[Task] = []
    durations: list[float] = []
    for i, e in enumerate(events):
        # a record is a device task of its own (it occupies its stream); a wait's time is blocking
        kind = MARKER if ev.is_marker(e.op) and "WAIT" in e.op.upper() else KERNEL
        meta: dict[str, Any] = {"measured_start_us": (e.start_s - t0) * 1e6, "comm": e.kind == "communication"}
        k = where.get(id(e))
        if facts is not None and k is not None:
            launch = facts.launch_s[k]
            if launch is not None:  # host and device clocks agree to a few µs: a launch is never after the start
                meta["release_us"] = (min(launch, e.start_s) - t0) * 1e6
            meta["core"], meta["blocks"] = facts.core[k], facts.blocks[k]
        tasks.append(Task(i, e.node, e.op, e.stream, kind, e.source, e.module, meta=meta))
        durations.append(max(e.end_s - e.start_s, 0.0) * 1e6)
    synced: set[int] = set()
    for sync, i, j in ev.resolved_syncs(timeline, step, events):
        if tasks[i].stream != tasks[j].stream:
            tasks[j].after.append((i, sync.kind))
            synced.update((i, j))
    _order_collectives(tasks, durations, synced)
    return ReplayPlan(timeline.graph, timeline.mode, "profile", tasks), durations


def _order_collectives(tasks: list[Task], durations: list[float], synced: set[int]) -> None:
    """A collective the folder records no event for is ordered as eager HCCL orders it: after the
    compute task that ended last before it began (its inputs), and before the first compute task that
    began after it ended (the one that waited for its result). Measured order, not a guess of data flow."""
    start = [float(t.meta["measured_start_us"]) for t in tasks]
    compute = sorted((i for i, t in enumerate(tasks) if t.kind == KERNEL and not t.meta.get("comm")),
                     key=start.__getitem__)
    ends = sorted(compute, key=lambda i: start[i] + durations[i])
    for c, t in enumerate(tasks):
        if not t.meta.get("comm") or c in synced:
            continue
        before = [i for i in ends if start[i] + durations[i] <= start[c] + 1e-6 and tasks[i].stream != t.stream]
        if before:
            t.after.append((before[-1], "fork"))
        end = start[c] + durations[c]
        after = next((i for i in compute if start[i] >= end - 1e-6 and tasks[i].stream != t.stream), None)
        if after is not None:
            tasks[after].after.append((c, "join"))

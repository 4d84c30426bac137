"""The static half of a multi-stream run: which stream runs each FX node, and what it waits for.

Built once per GraphModule and mode, then reused on every call. Stream assignment is the
verifier's (:func:`airctl.verify.plan.build_plan`), so the executor and ``airctl check`` agree
on where each node runs: in reduce-overhead a scope's label is ``values[0]`` when
``_user_stream_label`` is among its keys (aclgraph), in max-autotune the zipped
``_user_stream_label`` (GE); the innermost scope wins.

Per node the schedule holds three lists, all of node indices:

- ``deps``: nodes on *other* streams that must have finished before this one may start, so the
  emulation computes what eager PyTorch computes: its cross-stream data inputs, and for in-place
  writes the graph-order readers/writers of the same tensor. Waiting on them orders nothing
  (a real device would not wait): they only keep the emulated values right.
- ``syncs``: orderings the mode really gives — ``air.wait`` on its records (or on plain
  tensors: aclgraph inserts a record after them, GE takes the producer as the controller),
  TorchAir's closure events (``tagged_event_wait`` on the latest earlier ``tagged_event_record``
  of its tag), ``air.wait_tensor``'s dependency, and in max-autotune every cross-stream data
  edge (GE synchronises them). The executor merges their vector clocks and records a sync edge.
- ``reads``: cross-stream producers whose ordering the race check asks about at run time.

Collectives (:func:`airctl.graph.roles.collective_kind`) are ops with a ``collective`` kind; a
``wait_tensor`` on one is marked ``waits_for``. The emulation issues a graph's collectives in graph
order even when they sit on different streams (each waits for the previous one, an emulation
wait): gloo pairs the ranks' collectives by issue order, which must not depend on thread timing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airctl.execute.timeline import DEFAULT_STREAM
from airctl.graph import model
from airctl.graph.roles import Role, collective_kind, is_collective_wait
from airctl.io.fx_reader import read_fx
from airctl.modes import Mode
from airctl.verify.happens_before import is_inplace
from airctl.verify.plan import build_plan


@dataclass
class Item:
    index: int
    name: str
    op: str  # "aten.mm.default", "placeholder", "output", ...
    role: Role  # graph.roles.role_of, except: wait_tensor is an op in reduce-overhead, OTHER is an op
    stream: int
    source: str | None = None
    module: str | None = None
    deps: list[int] = field(default_factory=list)
    syncs: list[tuple[int, str]] = field(default_factory=list)  # (source node index, SyncEdge kind)
    reads: list[int] = field(default_factory=list)
    inplace_target: int | None = None  # in-place write: the node whose tensor it overwrites
    mutated_reads: list[int] = field(default_factory=list)  # inputs that some node writes in place
    tag: str | None = None  # tagged events
    collective: str | None = None  # all_reduce, all_gather, ... (graph.roles.collective_kind)
    waits_for: int | None = None  # a wait_tensor: the collective node it waits for


@dataclass
class Schedule:
    mode: Mode  # the semantics it runs under (Mode.semantics)
    streams: list[str]  # stream id -> name ("default" first)
    items: list[Item]
    per_stream: list[list[int]]  # stream id -> node indices in graph order
    signal: set[int]  # nodes another stream waits for (their completion is announced)
    output: int | None
    graph_name: str = "graph"
    notes: list[str] = field(default_factory=list)
    npugraph_ex: bool = False  # run as npugraph_ex: reduce-overhead's semantics, its own name in messages

    def describe(self, i: int) -> str:
        it = self.items[i]
        where = f" ({it.source})" if it.source else ""
        return f"{it.name}{where} on {stream_word(self.streams[it.stream])}"


def stream_word(name: str) -> str:
    """:func:`airctl.graph.model.stream_word` of a schedule's stream (``DEFAULT_STREAM``: the default one)."""
    return model.stream_word(None if name == DEFAULT_STREAM else name)


def _role(role: Role, mode: Mode) -> Role:
    """What the executor does with a node of ``role`` under ``mode``."""
    if role is Role.WAIT_TENSOR and mode.is_aclgraph:
        return Role.OP  # aclgraph runs its eager kernel, which raises by design (R12)
    return Role.OP if role is Role.OTHER else role


def build_schedule(gm: Any, mode: Mode, graph_name: str = "graph") -> Schedule:
    """The per-stream schedule of ``gm`` under ``mode``'s semantics (GE's or aclgraph's)."""
    asked = Mode.parse(mode)
    mode = asked.semantics
    graph = read_fx(gm, graph_name)
    plan = build_plan(graph, mode)
    fx_nodes = list(gm.graph.nodes)
    if len(fx_nodes) != len(graph.nodes):
        raise AssertionError("read_fx must give one node per FX node")
    names: dict[str | None, int] = {None: 0}
    for s in plan.stream:
        names.setdefault(s, len(names))
    streams = [DEFAULT_STREAM if s is None else str(s) for s in names]
    items = [Item(i, node.name, node.op, _role(plan.roles[i], mode), names[plan.stream[i]], node.source, node.module)
             for i, node in enumerate(graph.nodes)]
    sched = Schedule(mode, streams, items, [[] for _ in streams], set(), None, graph_name,
                     npugraph_ex=asked.is_npugraph_ex)
    _Linker(sched, fx_nodes).link()
    return sched


class _Linker:
    """Fills each item's ``deps``, ``syncs`` and ``reads`` walking the FX nodes in graph order: the
    collectives' issue order, the mode's syncs, the cross-stream reads, then the in-place hazards."""

    def __init__(self, sched: Schedule, fx_nodes: list[Any]) -> None:
        import torch.fx

        self.sched, self.items, self.fx_nodes = sched, sched.items, fx_nodes
        self.index = {n.name: i for i, n in enumerate(fx_nodes)}
        self.last_tag: dict[str, int] = {}
        self.writers: dict[int, list[int]] = {}  # tensor (producer index) -> in-place writers so far, graph order
        self.readers: dict[int, list[int]] = {}  # tensor -> readers so far
        self.last_collective: int | None = None
        self.mutated = {self.index[n.args[0].name] for n in fx_nodes
                        if n.op == "call_function" and n.args and isinstance(n.args[0], torch.fx.Node)
                        and is_inplace(self.items[self.index[n.name]].op)}

    def link(self) -> None:
        for i, fx_node in enumerate(self.fx_nodes):
            it = self.items[i]
            self.sched.per_stream[it.stream].append(i)
            if it.role is Role.OUTPUT:
                self.sched.output = i
            inputs = [self.index[n.name] for n in fx_node.all_input_nodes]
            if it.role is Role.INPUT:
                continue
            self._collective(it, inputs)
            self._syncs(it, fx_node, inputs)
            self._reads(it, inputs)
            self._inplace(it, fx_node, inputs)
            it.deps = list(dict.fromkeys(it.deps))
            self.sched.signal.update(it.deps)

    def _collective(self, it: Item, inputs: list[int]) -> None:
        """Collectives are issued in graph order whatever their streams; a wait_tensor names its collective."""
        it.collective = collective_kind(it.op) if it.role is Role.OP else None
        if it.collective is not None:
            if self.last_collective is not None and self.items[self.last_collective].stream != it.stream:
                it.deps.append(self.last_collective)  # issue order = graph order, whatever the streams
            self.last_collective = it.index
        elif is_collective_wait(it.op) and inputs and self.items[inputs[0]].collective is not None:
            it.waits_for = inputs[0]

    def _syncs(self, it: Item, fx_node: Any, inputs: list[int]) -> None:
        """The orderings the mode gives: air.wait on its records, wait_tensor's dependency, tagged events."""
        import torch.fx

        i, items = it.index, self.items
        if it.role is Role.WAIT:
            targets = _wait_targets(fx_node, self.index)
            it.syncs.extend((t, "record_wait") for t in targets)
            it.deps.extend(t for t in targets if items[t].stream != it.stream or t > i)
        elif it.role is Role.WAIT_TENSOR and len(inputs) > 1:
            dep = self.index[fx_node.args[1].name] if isinstance(fx_node.args[1], torch.fx.Node) else None
            if dep is not None:
                it.syncs.append((dep, "data"))
        elif it.role in (Role.TAGGED_RECORD, Role.TAGGED_WAIT):
            self._tagged(it, fx_node)

    def _tagged(self, it: Item, fx_node: Any) -> None:
        """A tagged_event_wait syncs with the latest earlier tagged_event_record of its tag."""
        it.tag = str(fx_node.args[0]) if fx_node.args else str(fx_node.kwargs.get("tag", fx_node.kwargs.get(
            "event_tag", "")))
        if it.role is Role.TAGGED_RECORD:
            self.last_tag[it.tag] = it.index
        elif it.tag in self.last_tag:
            src = self.last_tag[it.tag]
            streams = self.sched.streams
            s_src, s_dst = streams[self.items[src].stream], streams[it.stream]
            kind = ("fork" if s_src == DEFAULT_STREAM and s_dst != DEFAULT_STREAM
                    else "join" if s_src != DEFAULT_STREAM and s_dst == DEFAULT_STREAM else "event")
            it.syncs.append((src, kind))
            if self.items[src].stream != it.stream:
                it.deps.append(src)
        else:
            self.sched.notes.append(f"{it.name} waits for tag {it.tag!r} that no earlier node records: "
                                    "on a device it waits for nothing")

    def _reads(self, it: Item, inputs: list[int]) -> None:
        """Cross-stream data inputs: a sync in max-autotune (GE synchronises them), a checked read otherwise."""
        if it.role is Role.WAIT:
            return  # a wait's own arguments are syncs, not reads
        for j in dict.fromkeys(inputs):
            if self.items[j].role is Role.INPUT:
                continue
            if self.items[j].stream != it.stream or j > it.index:
                it.deps.append(j)
                if self.sched.mode.meaning.syncs_data_edges:
                    it.syncs.append((j, "data"))
                else:
                    it.reads.append(j)

    def _inplace(self, it: Item, fx_node: Any, inputs: list[int]) -> None:
        """In-place hazards, by tensor as the static verifier tracks them: graph-order readers and writers."""
        import torch.fx

        i = it.index
        target = self.index[fx_node.args[0].name] if (
            it.role is Role.OP and fx_node.op == "call_function" and fx_node.args
            and isinstance(fx_node.args[0], torch.fx.Node) and is_inplace(it.op)) else None
        for j in dict.fromkeys(inputs):
            if j in self.mutated:
                it.mutated_reads.append(j)
                it.deps.extend(w for w in self.writers.get(j, []) if self.items[w].stream != it.stream and w != i)
        if target is not None:
            it.inplace_target = target
            it.deps.extend(r for r in self.readers.get(target, []) if self.items[r].stream != it.stream and r != i)
            self.writers.setdefault(target, []).append(i)
        for j in dict.fromkeys(inputs):
            if j in self.mutated:
                self.readers.setdefault(j, []).append(i)


def _wait_targets(fx_node: Any, index: dict[str, int]) -> list[int]:
    import torch.fx

    args = fx_node.args
    seq = args[0] if args and isinstance(args[0], (list, tuple)) else fx_node.kwargs.get("x", [])
    return [index[a.name] for a in seq if isinstance(a, torch.fx.Node)]

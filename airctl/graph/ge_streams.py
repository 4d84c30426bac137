"""GE's automatic multi-stream allocation (``ge.autoMultistreamParallelMode``), as airctl models it.

TorchAir passes ``config.ge_config.multistream_parallel_mode`` to GE as the graph option
``ge.autoMultistreamParallelMode``; GE then assigns the ops of the graph it builds to streams and
puts events between them. GE's documentation names the modes, and its design the method; this
module follows that description (docs/sim.md, "GE's automatic multi-stream", lists where its
result may differ from GE's):

- ``LoadBalance:N``: a minimum path cover of the op graph by bipartite matching
  (:mod:`airctl.graph.path_cover`), whose chains are merged into at most ``N`` streams, each chain
  to the stream with the fewest ops so far (chains in the order of their first op);
- ``MainStream:N``: the same chains; the *serial* ops (ordered against every other op: nothing can
  run beside them) and the longest chain stay on the main stream 0, the other chains are
  balanced over streams ``1..N-1``;
- ``WeightedLoadBalance:N``: the chains list-scheduled by op time (``op_times_us``, from an msprof
  ``op_summary.csv``): each chain, in the order it becomes ready, goes to the stream that is free
  first (of chains ready together, the one with the longer path to the end first). Without a time
  for any op of the graph it is ``LoadBalance:N`` (as GE does);
- ``cv``: Cube (matrix) ops on stream 1, every other op on stream 0, so the two units overlap.

``N`` is 1..64. Ops with a ``_user_stream_label`` keep their stream: one stream per label, after
the automatic ones, named by the label. The graph is GE's (``dialect == "ge"``) or an FX graph, whose
ops are its calls and whose labelled ops are those inside a stream scope (``node.stream``), so a
predictor can ask what GE would do with the graph TorchAir converts. Ops GE runs no task for (``Data``, ``Const``,
``NetOutput``, ...) get no stream. Then GE's events: one per cross-stream dependency (data or
control edge, and every input of ``NetOutput``, which ends on stream 0) that no earlier event
already orders, found with vector clocks in graph order. GE's build places a ``Send`` after the
producer on its stream and a ``Recv`` before the consumer on the consumer's stream.

>>> from airctl.graph.model import Graph, Node
>>> g = Graph("g", "ge", [Node("x", "Data"), Node("a", "Abs", ["x:0"]), Node("b", "Exp", ["x:0"]),
...                        Node("c", "Add", ["a:0", "b:0"]), Node("out", "NetOutput", ["c:0"])])
>>> alloc = allocate_streams(g, "LoadBalance:2")
>>> alloc.stream, [(e.src, e.dst) for e in alloc.events]
({'a': 0, 'c': 0, 'b': 1}, [('b', 'c')])
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from airctl.graph.model import STREAM_LABEL, Graph, Node
from airctl.graph.order import predecessors
from airctl.graph.order import topological as sort_positions
from airctl.graph.path_cover import path_cover
from airctl.graph.roles import role_of

MODES = ("cv", "LoadBalance", "MainStream", "WeightedLoadBalance")
MAX_STREAMS = 64
NO_TASK = frozenset({"Data", "RefData", "Const", "Constant", "NetOutput", "Variable", "ConstPlaceHolder", "NoOp"})
CUBE = re.compile(r"MatMul|Matmul|BatchMatMul|Conv2D|Conv3D|Conv2DBackprop|QuantBatchMatmul|GroupedMatmul")
_SPEC = re.compile(r"^(cv|LoadBalance|MainStream|WeightedLoadBalance)(?::(\d+))?$")


class StreamSpecError(ValueError):
    """A ``multistream_parallel_mode`` value GE does not take."""


class GraphOrderError(ValueError):
    """A graph whose edges make a cycle: no stream order exists."""


@dataclass(frozen=True)
class Event:
    """A GE event: ``src`` (on ``src_stream``) records, ``dst`` (on ``dst_stream``) waits for it."""

    id: int
    src: str
    dst: str
    src_stream: int
    dst_stream: int


@dataclass
class Allocation:
    """Per op its stream id, the streams' names, and the events GE would insert."""

    spec: str
    stream: dict[str, int] = field(default_factory=dict)  # op name -> stream id (task ops only)
    names: dict[int, str | None] = field(default_factory=dict)  # stream id -> name (0: None, the main stream)
    events: list[Event] = field(default_factory=list)
    weighted: bool = False  # WeightedLoadBalance used op times (some op of the graph had one)

    @property
    def streams(self) -> list[int]:
        return sorted(set(self.stream.values()))


def parse_spec(spec: str) -> tuple[str, int]:
    """``"LoadBalance:4"`` -> ``("LoadBalance", 4)``; ``"cv"`` -> ``("cv", 2)``."""
    m = _SPEC.match(spec.strip())
    if m is None:
        raise StreamSpecError(f"ge.autoMultistreamParallelMode={spec!r} is not one of cv, LoadBalance:N, "
                              f"MainStream:N, WeightedLoadBalance:N (N = 1..{MAX_STREAMS})")
    mode, count = m.group(1), m.group(2)
    if mode == "cv":
        if count is not None:
            raise StreamSpecError(f"ge.autoMultistreamParallelMode={spec!r}: cv takes no stream count")
        return mode, 2
    if count is None or not 1 <= int(count) <= MAX_STREAMS:
        raise StreamSpecError(f"ge.autoMultistreamParallelMode={spec!r}: {mode} needs a stream count N in "
                              f"1..{MAX_STREAMS}, as {mode}:4")
    return mode, int(count)


def is_task(node: Node) -> bool:
    """Whether GE runs a task for the node: a GE op outside :data:`NO_TASK`; in an FX graph, an op
    (not an input, the output, a scope marker, a record or a wait)."""
    return node.op not in NO_TASK and role_of(node).is_op


def _is_output(node: Node) -> bool:
    return node.op in ("NetOutput", "output") or node.kind == "output"


def _label(node: Node, dialect: str) -> str | None:
    """A user's stream: the ``_user_stream_label`` attribute of a GE op, the scope's stream of an FX node."""
    value = node.attrs.get(STREAM_LABEL) if dialect == "ge" else node.stream
    return None if value is None else str(value)


def _op_time(name: str, times: Mapping[str, float]) -> float | None:
    """An op's time by its name, else by its name without scope (after the last ``/``), as GE matches."""
    if name in times:
        return times[name]
    return times.get(name.rsplit("/", 1)[-1])


def allocate_streams(graph: Graph, spec: str, op_times_us: Mapping[str, float] | None = None) -> Allocation:
    """GE's stream of every task op of ``graph`` under ``spec``, and the events between streams."""
    mode, limit = parse_spec(spec)
    alloc = Allocation(spec=spec.strip(), names={0: None})
    order = topological(graph)
    ops = [n for n in order if is_task(n)]
    labels = {n.name: label for n in ops if (label := _label(n, graph.dialect)) is not None}
    free = [n for n in ops if n.name not in labels]
    index = {n.name: i for i, n in enumerate(free)}
    succ: list[list[int]] = [[] for _ in free]
    for n in free:
        for ref in [*n.inputs, *n.control_inputs]:
            src = index.get(Node.producer(ref))
            if src is not None and src < index[n.name]:
                succ[src].append(index[n.name])
    succ = [sorted(set(s)) for s in succ]
    times = {n.name: t for n in free if (t := _op_time(n.name, op_times_us or {})) is not None}
    if mode == "cv":
        for n in free:
            alloc.stream[n.name] = 1 if CUBE.search(n.op) else 0
    else:
        chains = path_cover(len(free), succ)
        if mode == "WeightedLoadBalance" and times:
            alloc.weighted = True
            placed = _list_schedule(chains, succ, [times.get(n.name, 0.0) for n in free], limit)
        elif mode == "MainStream":
            placed = _main_stream(chains, succ, limit)
        else:
            placed = _balance(chains, limit)
        for chain, sid in zip(chains, placed, strict=True):
            for i in chain:
                alloc.stream[free[i].name] = sid
    used = sorted(set(alloc.stream.values()))
    renumber = {old: new for new, old in enumerate([0, *[s for s in used if s != 0]])}
    alloc.stream = {k: renumber[v] for k, v in alloc.stream.items()}
    for sid in renumber.values():
        alloc.names[sid] = None if sid == 0 else str(sid)
    for label in dict.fromkeys(labels.values()):
        sid = len(alloc.names)
        alloc.names[sid] = label
        for op, lab in labels.items():
            if lab == label:
                alloc.stream[op] = sid
    alloc.events = events_of(Graph(graph.name, graph.dialect, order), alloc.stream)
    return alloc


def topological(graph: Graph) -> list[Node]:
    """The nodes in graph order where that order is topological; else the stable order that is (each
    node as early as its producers allow, ties by graph order)."""
    preds = predecessors(graph, self_edges=True)
    if all(p < i for i, ps in enumerate(preds) for p in ps):
        return list(graph.nodes)
    order, stuck = sort_positions(preds)
    if stuck:
        cycle = [graph.nodes[i].name for i in stuck][:5]
        raise GraphOrderError(f"graph {graph.name} has a cycle through {', '.join(cycle)}: GE cannot order its streams")
    return [graph.nodes[i] for i in order]


def _balance(chains: list[list[int]], limit: int, first: int = 0) -> list[int]:
    """Each chain, in order, to the stream of ``first..limit-1`` with the fewest ops so far (the lowest of equals)."""
    load = dict.fromkeys(range(first, limit), 0)
    out = []
    for chain in chains:
        sid = min(load, key=lambda s: (load[s], s))
        load[sid] += len(chain)
        out.append(sid)
    return out


def _serial(n: int, succ: list[list[int]]) -> list[bool]:
    """Ops ordered against every other op (nothing can run beside them). In a topological order, ``v``
    is one iff no edge jumps over it, every op before it has a successor and every op after it a
    predecessor: then every path from an earlier op reaches ``v``, and ``v`` reaches every later op."""
    crossing = [0] * (n + 1)
    has_pred = [False] * n
    for u, targets in enumerate(succ):
        for w in targets:
            has_pred[w] = True
            if w > u + 1:
                crossing[u + 1] += 1
                crossing[w] -= 1
    before_ok = [True] * (n + 1)  # before_ok[v]: every op < v has a successor
    for u in range(n):
        before_ok[u + 1] = before_ok[u] and bool(succ[u])
    after_ok = [True] * (n + 1)  # after_ok[v]: every op > v has a predecessor
    for w in range(n - 1, 0, -1):
        after_ok[w - 1] = after_ok[w] and has_pred[w]
    out, depth = [], 0
    for v in range(n):
        depth += crossing[v]
        out.append(depth == 0 and before_ok[v] and after_ok[v])
    return out


def _main_stream(chains: list[list[int]], succ: list[list[int]], limit: int) -> list[int]:
    serial = _serial(len(succ), succ)
    main = max(range(len(chains)), key=lambda k: (sum(serial[i] for i in chains[k]), len(chains[k]), -k))
    on_main = [k == main or limit == 1 or all(serial[i] for i in chain) for k, chain in enumerate(chains)]
    others = iter(_balance([c for c, stays in zip(chains, on_main, strict=True) if not stays], limit, first=1))
    return [0 if stays else next(others) for stays in on_main]


def _list_schedule(chains: list[list[int]], succ: list[list[int]], cost: list[float], limit: int) -> list[int]:
    """Chains in the order they become ready (earliest start with unlimited streams; of two ready at once,
    the one with the longer path to the end first), each to the stream free first; a stream is busy
    until its chains' ops are done."""
    n = len(cost)
    start = [0.0] * n
    for u in range(n):
        for w in succ[u]:
            start[w] = max(start[w], start[u] + cost[u])
    level = list(cost)  # bottom level: the longest path from an op to the end, its own time included
    for u in range(n - 1, -1, -1):
        level[u] = cost[u] + max((level[w] for w in succ[u]), default=0.0)
    order = sorted(range(len(chains)), key=lambda k: (start[chains[k][0]], -level[chains[k][0]], chains[k][0]))
    free_at = [0.0] * limit
    out = [0] * len(chains)
    for k in order:
        sid = min(range(limit), key=lambda s: (free_at[s], s))
        free_at[sid] = max(free_at[sid], start[chains[k][0]]) + sum(cost[i] for i in chains[k])
        out[k] = sid
    return out


def events_of(graph: Graph, stream: Mapping[str, int]) -> list[Event]:
    """The cross-stream dependencies no earlier event orders, in graph order (vector clocks)."""
    clock: dict[str, dict[int, int]] = {}  # op -> {stream: position of the last op known done}
    last: dict[int, dict[int, int]] = {}
    position: dict[str, int] = {}
    count: dict[int, int] = {}
    events: list[Event] = []
    for node in graph.nodes:
        sid = stream.get(node.name, 0 if _is_output(node) else None)
        if sid is None:
            continue
        vc = dict(last.get(sid, {}))
        latest: dict[int, str] = {}  # per other stream, the latest producer this op reads
        for ref in [*node.inputs, *node.control_inputs]:
            src = Node.producer(ref)
            ssid = stream.get(src)
            if ssid is None or ssid == sid or src not in position:
                continue
            if ssid not in latest or position[src] > position[latest[ssid]]:
                latest[ssid] = src
        needed = [src for ssid, src in latest.items() if vc.get(ssid, -1) < position[src] and not any(
            other != src and clock[other].get(ssid, -1) >= position[src] for other in latest.values())]
        for src in sorted(needed, key=lambda name: (stream[name], position[name])):
            events.append(Event(len(events), src, node.name, stream[src], sid))
            for s, p in clock[src].items():
                vc[s] = max(vc.get(s, -1), p)
        count[sid] = count.get(sid, -1) + 1
        position[node.name] = count[sid]
        vc[sid] = count[sid]
        clock[node.name] = vc
        last[sid] = vc
    return events

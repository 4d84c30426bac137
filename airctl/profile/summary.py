"""What a profile says in numbers: busy and idle time per stream, overlap, critical path, top ops.

Definitions (docs/profile.md §Summaries):

- the *span* of a step runs from its first op's start to its last op's end;
- a stream is *busy* while any of its ops runs (overlapping ops on one stream count once), *idle*
  for the rest of the span; record/wait/scope markers are not work (a wait's length is blocked time);
- *overlap* is the time during which at least two streams are busy;
- the *critical path* is the longest chain, by op duration, through program order on each stream
  and the sync edges between streams, ending at the step's last op (markers weigh 0);
- every number comes from the step with the median span (one slow first step does not speak for
  the run), except the top ops (mean per step). Several graphs add up (they run one after the other).

>>> from airctl.execute.timeline import OpEvent, Timeline
>>> t = Timeline("graph_1", "max-autotune", events=[OpEvent("mm", "aten.mm", "s1", 0.0, 2.0),
...     OpEvent("add", "aten.add", "default", 1.0, 3.0)])
>>> s = summarize([t])
>>> [(x.stream, x.busy_s, x.idle_s) for x in s.streams], s.overlap_s
([('default', 2.0, 1.0), ('s1', 2.0, 1.0)], 1.0)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from statistics import median
from typing import Any

from airctl.execute.timeline import OpEvent, Race, Timeline
from airctl.profile import events as ev


@dataclass
class StreamStats:
    stream: str
    busy_s: float
    idle_s: float
    busy_pct: float
    ops: int  # ops in the step (markers not counted)
    largest_gap_s: float = 0.0  # longest idle stretch between two of its ops
    comm_ops: int = 0  # of which communication (HCCL) ops: an NPU's communication stream has comm_ops == ops


@dataclass
class PathStep:
    graph: str
    node: str
    op: str
    stream: str
    start_s: float
    end_s: float
    source: str | None
    via: str  # "start", "program" (after the previous op on its stream) or "sync:<kind>"
    work_s: float = 0.0  # what it adds to the path: its duration, 0 for record/wait/scope markers

    @property
    def dur_s(self) -> float:
        return self.end_s - self.start_s


@dataclass
class OpTotal:
    op: str
    count: int  # per step
    total_s: float  # per step
    mean_s: float  # per call
    share: float  # of all op time


@dataclass
class NodeTotal:
    graph: str
    node: str
    op: str
    stream: str
    total_s: float  # per step
    source: str | None


@dataclass
class GraphSummary:
    graph: str
    mode: str  # its timeline's label (Timeline.mode): a mode's value, or npu-profile
    steps: int
    span_s: float
    streams: list[StreamStats]
    overlap_s: float
    critical_path: list[PathStep]
    critical_path_s: float
    step: int | None  # the representative step


@dataclass
class ProfileSummary:
    streams: list[StreamStats]
    overlap_s: float
    span_s: float
    step_s: float | None  # median wall time of a step (step_seconds), None when not measured
    step_seconds: list[float]
    critical_path: list[PathStep]
    critical_path_s: float
    top_ops: list[OpTotal]
    top_nodes: list[NodeTotal]
    races: list[Race]
    graphs: list[GraphSummary]
    trace: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    npu: dict[str, Any] | None = None  # profile analyze: sources, columns, per-step breakdown and its check
    predicted: dict[str, Any] | None = None  # profile --times: the replay's record (airctl.predict.prediction)

    def to_json(self) -> dict[str, Any]:
        def steps(path: list[PathStep]) -> list[dict[str, Any]]:
            return [{**asdict(p), "dur_s": p.dur_s} for p in path]

        return {
            "streams": [asdict(s) for s in self.streams],
            "overlap_s": self.overlap_s,
            "span_s": self.span_s,
            "step_s": self.step_s,
            "step_seconds": list(self.step_seconds),
            "critical_path": steps(self.critical_path),
            "critical_path_s": self.critical_path_s,
            "top_ops": [asdict(o) for o in self.top_ops],
            "top_nodes": [asdict(n) for n in self.top_nodes],
            "races": [asdict(r) for r in self.races],
            "graphs": [{**asdict(g), "critical_path": steps(g.critical_path)} for g in self.graphs],
            "trace": self.trace,
            "meta": dict(self.meta),
            **({"npu": self.npu} if self.npu is not None else {}),
            **({"predicted": self.predicted} if self.predicted is not None else {}),
        }


def _intervals(events: list[OpEvent]) -> dict[str, list[tuple[float, float]]]:
    per: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for e in events:
        if not ev.is_marker(e.op):
            per[e.stream].append((e.start_s, e.end_s))
    return per


def critical_path(timeline: Timeline, step: int) -> list[PathStep]:
    """Longest chain by work (:func:`events.work_s`) through per-stream program order and sync
    edges, ending at the step's last op. A sync edge counts when its source ended no later than its
    destination did (a wait starts blocking before the record it waits for)."""
    events = ev.step_events(timeline, step)
    if not events:
        return []
    preds: list[list[tuple[int, str]]] = [[] for _ in events]
    last_on: dict[str, int] = {}
    for i, e in enumerate(events):
        if e.stream in last_on:
            preds[i].append((last_on[e.stream], "program"))
        last_on[e.stream] = i
    for sync, i, j in ev.resolved_syncs(timeline, step, events):
        if events[i].end_s <= events[j].end_s + 1e-12:
            preds[j].append((i, f"sync:{sync.kind}"))
    best: dict[int, float] = {}
    parent: dict[int, tuple[int, str] | None] = {}
    for i in _topological(preds):
        base, choice = 0.0, None
        for j, via in preds[i]:
            if j in best and (choice is None or best[j] > base):
                base, choice = best[j], (j, via)
        best[i] = base + ev.work_s(events[i])
        parent[i] = choice
    cur: int | None = max(range(len(events)), key=lambda i: (events[i].end_s, best[i]))
    out: list[PathStep] = []
    while cur is not None:
        e, p = events[cur], parent[cur]
        out.append(PathStep(timeline.graph, e.node, e.op, e.stream, e.start_s, e.end_s, e.source,
                            p[1] if p else "start", ev.work_s(e)))
        cur = p[0] if p else None
    return out[::-1]


def _topological(preds: list[list[tuple[int, str]]]) -> list[int]:
    """Kahn's order, lowest index (earliest start) first; should timing noise close a cycle, the
    earliest waiting op goes next and its unfinished predecessors are ignored."""
    import heapq

    succs: list[list[int]] = [[] for _ in preds]
    indeg = [0] * len(preds)
    for i, ps in enumerate(preds):
        for j, _ in ps:
            succs[j].append(i)
            indeg[i] += 1
    ready = [i for i, d in enumerate(indeg) if d == 0]
    heapq.heapify(ready)
    done: set[int] = set()
    order: list[int] = []
    while len(order) < len(preds):
        if not ready:
            heapq.heappush(ready, min(i for i in range(len(preds)) if i not in done))
        i = heapq.heappop(ready)
        if i in done:
            continue
        done.add(i)
        order.append(i)
        for k in succs[i]:
            indeg[k] -= 1
            if indeg[k] == 0 and k not in done:
                heapq.heappush(ready, k)
    return order


def summarize_graph(timeline: Timeline) -> GraphSummary:
    """The numbers of one graph, all from its median step (:func:`events.representative_step`)."""
    ids = ev.step_ids(timeline)
    rep = ev.representative_step(timeline)
    events = ev.step_events(timeline, rep) if rep is not None else []
    a, b = ev.span(events)
    span_s = b - a
    per = _intervals(events)
    gaps = _largest_gaps(events)
    comm: dict[str, int] = defaultdict(int)
    for e in events:
        if e.kind == "communication" and not ev.is_marker(e.op):
            comm[e.stream] += 1
    streams = []
    for s in timeline.streams():
        busy = ev.length(ev.union(per.get(s, [])))
        streams.append(StreamStats(s, busy, max(span_s - busy, 0.0), 100.0 * busy / span_s if span_s > 0 else 0.0,
                                   len(per.get(s, [])), gaps.get(s, 0.0), comm[s]))
    path = critical_path(timeline, rep) if rep is not None else []
    return GraphSummary(timeline.graph, timeline.mode, len(ids), span_s, streams, ev.overlap(per), path,
                        sum(p.work_s for p in path), rep)


def _largest_gaps(events: list[OpEvent]) -> dict[str, float]:
    out: dict[str, float] = {}
    for stream, intervals in _intervals(events).items():
        merged = ev.union(intervals)
        out[stream] = max((b[0] - a[1] for a, b in zip(merged, merged[1:], strict=False)), default=0.0)
    return out


def summarize(timelines: list[Timeline], races: list[Race] | None = None, step_seconds: list[float] | None = None,
              top: int = 10) -> ProfileSummary:
    """One summary over the timelines of a run (one per graph). ``races`` default to the timelines' own."""
    graphs = [summarize_graph(t) for t in timelines]
    order: dict[str, None] = {}
    busy: dict[str, float] = defaultdict(float)
    ops: dict[str, int] = defaultdict(int)
    comm: dict[str, int] = defaultdict(int)
    gap: dict[str, float] = defaultdict(float)
    for g in graphs:
        for s in g.streams:
            order.setdefault(s.stream, None)
            busy[s.stream] += s.busy_s
            ops[s.stream] += s.ops
            comm[s.stream] += s.comm_ops
            gap[s.stream] = max(gap[s.stream], s.largest_gap_s)
    span_s = sum(g.span_s for g in graphs)
    streams = [StreamStats(s, busy[s], max(span_s - busy[s], 0.0), 100.0 * busy[s] / span_s if span_s > 0 else 0.0,
                           ops[s], gap[s], comm[s]) for s in order]
    if "default" in order:  # the main stream first, as Timeline.streams() does
        streams.sort(key=lambda s: s.stream != "default")
    if races is None:
        races = [r for t in timelines for r in t.races]
    seen: set[tuple[str, str]] = set()
    unique = []
    for r in races:
        if (r.reader, r.producer) not in seen:
            seen.add((r.reader, r.producer))
            unique.append(r)
    if step_seconds is None:
        # graphs run one after the other within a step: add their step times index by index
        runs = [t.step_seconds for t in timelines if t.step_seconds]
        step_seconds = [sum(x) for x in zip(*runs, strict=False)] if runs else []
    path = [p for g in graphs for p in g.critical_path]
    return ProfileSummary(
        streams=streams, overlap_s=sum(g.overlap_s for g in graphs), span_s=span_s,
        step_s=median(step_seconds) if step_seconds else None, step_seconds=list(step_seconds),
        critical_path=path, critical_path_s=sum(p.work_s for p in path),
        top_ops=top_ops(timelines, top), top_nodes=top_nodes(timelines, top), races=unique, graphs=graphs,
        meta={"modes": sorted({t.mode for t in timelines}),
              "simulated": any(t.meta.get("simulated", t.mode != "npu-profile") for t in timelines)},
    )


def top_ops(timelines: list[Timeline], top: int = 10) -> list[OpTotal]:
    """Ops (targets) by time per step, summed over graphs."""
    total: dict[str, float] = defaultdict(float)
    calls: dict[str, float] = defaultdict(float)
    for t in timelines:
        n = max(len(ev.step_ids(t)), 1)
        for e in t.events:
            if ev.is_marker(e.op):
                continue
            total[e.op] += (e.end_s - e.start_s) / n
            calls[e.op] += 1 / n
    all_time = sum(total.values()) or 1.0
    rows = [OpTotal(op, round(calls[op]), total[op], total[op] / calls[op], total[op] / all_time) for op in total]
    return sorted(rows, key=lambda r: -r.total_s)[:top]


def top_nodes(timelines: list[Timeline], top: int = 10) -> list[NodeTotal]:
    rows: dict[tuple[str, str], NodeTotal] = {}
    for t in timelines:
        n = max(len(ev.step_ids(t)), 1)
        for e in t.events:
            if ev.is_marker(e.op):
                continue
            row = rows.setdefault((t.graph, e.node), NodeTotal(t.graph, e.node, e.op, e.stream, 0.0, e.source))
            row.total_s += (e.end_s - e.start_s) / n
    return sorted(rows.values(), key=lambda r: -r.total_s)[:top]

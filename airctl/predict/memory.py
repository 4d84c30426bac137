"""What a stream plan costs in device memory: each tensor's life over the replayed step, and the peak.

The model (docs/memory.md states it, with its sources; this is the one statement in code):

1. **Blocks.** Every tensor a kernel makes is one allocator block, ``round_up(bytes + 32, 512)``
   (:mod:`.memory_sizes`); views, ``getitem``, in-place ops and ``wait_tensor`` make none (their
   value is their first input's block, whose life their readers extend).
2. **Lives.** A block is allocated when its producer task starts (``Replayed.start_us``). It is
   free again after its last reader *on the producer's stream* ends (program order on that stream;
   with no reader, after the producer ends). A reader on another stream S keeps it alive until
   that read is ordered back to the producer's stream P: the first task q on P after the producer
   with an ``after`` ordering on a task of S at or after the reader (a wait on a record placed
   after the read, a GE event on a data edge) — the allocator's ``record_stream`` rule. It is
   freed when P passes q (a marker's end, a kernel's start). Such a block is **stretched** when
   q comes later than the producer stream's own last use. With no such q the block's life is
   **unbounded**: it lives to the graph's end (which joins every stream). Under aclgraph it is a
   race when P allocates again after that read (the allocator may hand the block out while S still
   reads it); under GE the static plan never reuses it.
   Outputs live to the graph's end. Inputs and parameters live throughout and are counted apart.
3. **Live bytes** at a time: the blocks alive then. Events at one time follow program order, and at
   one task: the frees it releases as it starts, its allocations, the frees after its end (so
   zero-length kernels keep their order). ``allocated_peak_bytes``
   is the highest total, ``peak_at`` the task whose allocation reached it; ``by_stream[s]`` is the
   highest total of the blocks stream s allocated.
4. **The mode's rule.** Blocks are reused only on the stream that allocated them: torch_npu's
   caching allocator keeps its free blocks per stream (in a capture's private pool too), and GE's
   static plan reuses memory only across ops ordered on one stream or by an event. So a graph
   holds ``planned_bytes = Σ by_stream``:

   - reduce-overhead, npugraph_ex: the aclgraph capture pool, held while the graph lives;
   - max-autotune: GE's static feature-map plan (its workspace is not in the graph: not counted;
     reuse between streams through events is not modelled, so this is an upper bound there);

   and ``peak_bytes = inputs_bytes + params_bytes + planned_bytes``. A plan with no graph mode
   (a profiler's measured plan) uses the allocator's peak, ``allocated_peak_bytes``, instead.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from airctl.predict.memory_sizes import GraphTensors, Tensor, graph_tensors
from airctl.predict.plan import MARKER, ReplayPlan, Task
from airctl.predict.replay import Replayed

SERIES_POINTS = 2000  # at most this many (time_us, bytes) points per stream in live_bytes
LISTED = 50  # stretched and unbounded tensors listed, largest first; the rest are counted


@dataclass
class Life:
    tensor: Tensor
    stream: str  # the producer's
    alloc_us: float
    free_us: float
    until: int | None  # the task after which the block is free (None: the graph's end)
    own_until: int  # the producer stream's last reader (or the producer)
    stretched_by: str | None = None  # the stream whose read kept it past own_until
    before_until: bool = False  # freed as ``until`` starts (a kernel ordered after the read), not after it ends
    unbounded_by: tuple[str, int] | None = None  # (stream, reader) of a read never ordered back


@dataclass
class MemoryPrediction:
    graph: str
    mode: str  # the plan's mode label (ReplayPlan.mode), as the JSON writes it
    rule: str  # "aclgraph capture pool", "GE static plan" or "allocator"
    peak_bytes: int
    peak_at: dict[str, Any] | None
    allocated_peak_bytes: int
    planned_bytes: int
    by_stream: dict[str, int]
    inputs_bytes: int
    params_bytes: int
    outputs_bytes: int
    intermediates_peak_bytes: int
    stretched: list[dict[str, Any]]
    unbounded: list[dict[str, Any]]
    live_bytes: dict[str, list[tuple[float, int]]]
    unsized: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    lives: list[Life] = field(default_factory=list, repr=False)

    @property
    def counts(self) -> dict[str, int]:
        """How many blocks were stretched and left unbounded (the lists hold the LISTED largest)."""
        return {"stretched": sum(1 for life in self.lives if life.stretched_by),
                "unbounded": sum(1 for life in self.lives if life.unbounded_by)}

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "rule": self.rule, "peak_bytes": self.peak_bytes, "peak_at": self.peak_at,
                "allocated_peak_bytes": self.allocated_peak_bytes, "planned_bytes": self.planned_bytes,
                "by_stream": self.by_stream, "inputs_bytes": self.inputs_bytes, "params_bytes": self.params_bytes,
                "outputs_bytes": self.outputs_bytes, "intermediates_peak_bytes": self.intermediates_peak_bytes,
                "stretched": self.stretched, "unbounded": self.unbounded, "counts": self.counts,
                "live_bytes": {s: [[round(t, 3), b] for t, b in pts] for s, pts in self.live_bytes.items()},
                "unsized": self.unsized, "notes": self.notes}


def predict_memory(plan: ReplayPlan, replayed: Replayed) -> MemoryPrediction:
    """The memory the plan holds over its replayed step (the model is this module's docstring)."""
    found: GraphTensors = graph_tensors(plan)
    lives = lifetimes(plan, replayed, found.tensors)
    sweep = _Sweep(plan.tasks, replayed, lives)
    resident = {k: sum(t.bytes for t in found.tensors if t.kind == k) for k in ("input", "param")}
    planned = sum(sweep.by_stream.values())
    if plan.compiled is not None and plan.dialect != "profile":
        rule = plan.compiled.meaning.memory_rule  # GE's static plan, or aclgraph's capture pool
    else:
        rule, planned = "allocator", sweep.peak
    notes = _notes(plan, found, lives, rule)
    return MemoryPrediction(
        plan.graph, str(plan.mode), rule, resident["input"] + resident["param"] + planned, sweep.peak_at, sweep.peak,
        planned, sweep.by_stream, resident["input"], resident["param"],
        sum(t.bytes for t in found.tensors if t.kind == "output"), sweep.inter_peak,
        _listed([_stretched(life, plan.tasks) for life in lives if life.stretched_by]),
        _listed([_unbounded(life, plan.tasks, rule, _last_alloc(lives)) for life in lives if life.unbounded_by]),
        sweep.series(), found.unsized, notes, lives)


def lifetimes(plan: ReplayPlan, replayed: Replayed, tensors: list[Tensor]) -> list[Life]:
    """Each block's life (point 2 of the model); inputs and parameters have none (always alive)."""
    tasks = plan.tasks
    orderings = _orderings(tasks)
    span = replayed.span_us
    lives: list[Life] = []
    for t in tensors:
        p = t.producer
        if p is None:
            continue
        own_stream = tasks[p].stream
        own = max((r for r in t.readers if tasks[r].stream == own_stream), default=p)
        life = Life(t, own_stream, replayed.start_us[p], replayed.end_us[own], own, own)
        if t.kind == "output":
            life.free_us, life.until = span, None
            lives.append(life)
            continue
        for r in t.readers:
            other = tasks[r].stream
            if other == own_stream:
                continue
            q = _release(orderings.get(own_stream), p, other, r)
            if q is None:
                life.free_us, life.until, life.stretched_by, life.unbounded_by = span, None, None, (other, r)
                break
            before = tasks[q].kind != MARKER
            at = replayed.start_us[q] if before else replayed.end_us[q]
            if at > life.free_us:
                life.free_us, life.until, life.stretched_by, life.before_until = at, q, other, before
        life.free_us = max(life.free_us, life.alloc_us)
        lives.append(life)
    return lives


@dataclass
class _Waits:
    tasks: list[int]  # tasks of one stream with orderings on other streams, in program order
    latest: list[dict[str, int]]  # for each: stream -> the latest task of it waited for


def _orderings(tasks: list[Task]) -> dict[str, _Waits]:
    out: dict[str, _Waits] = {}
    for t in tasks:
        if not t.after:
            continue
        latest: dict[str, int] = {}
        for j, _ in t.after:
            s = tasks[j].stream
            latest[s] = max(latest.get(s, -1), j)
        w = out.setdefault(t.stream, _Waits([], []))
        w.tasks.append(t.index)
        w.latest.append(latest)
    return out


def _release(waits: _Waits | None, producer: int, stream: str, reader: int) -> int | None:
    """The first task after ``producer`` on its stream ordered after a task of ``stream`` at or after ``reader``."""
    if waits is None:
        return None
    for k in range(bisect.bisect_right(waits.tasks, producer), len(waits.tasks)):
        if waits.latest[k].get(stream, -1) >= reader:
            return waits.tasks[k]
    return None


class _Sweep:
    """Live bytes over time: totals, per stream, the peaks and where they were reached (point 3)."""

    def __init__(self, tasks: list[Task], replayed: Replayed, lives: list[Life]) -> None:
        # (time, task, phase, life, ±bytes): at one time, program order; at one task, the frees before
        # it, its allocations, the frees after it
        events: list[tuple[float, int, int, int, int]] = []
        end = len(tasks)
        for n, life in enumerate(lives):
            b = life.tensor.bytes
            if not b:
                continue
            events.append((life.alloc_us, life.tensor.producer or 0, 1, n, b))
            events.append((life.free_us, end if life.until is None else life.until, 0 if life.before_until else 2,
                           n, -b))
        events.sort()
        live: dict[str, int] = {}
        self.by_stream: dict[str, int] = {}
        self.points: dict[str, list[tuple[float, int]]] = {}
        self.peak = self.inter_peak = total = inter = 0
        self.peak_at: dict[str, Any] | None = None
        for time, _, _, n, delta in events:
            life = lives[n]
            s = life.stream
            live[s] = live.get(s, 0) + delta
            total += delta
            if life.tensor.kind == "intermediate":
                inter += delta
                self.inter_peak = max(self.inter_peak, inter)
            self.by_stream[s] = max(self.by_stream.get(s, 0), live[s])
            self.points.setdefault(s, []).append((time, live[s]))
            if delta > 0 and total > self.peak:
                self.peak = total
                task = tasks[life.tensor.producer or 0]
                self.peak_at = {"node": task.name, "source": task.source, "stream": s, "time_us": round(time, 3),
                                "bytes": total}
        for s in {t.stream for t in tasks}:
            self.by_stream.setdefault(s, 0)

    def series(self) -> dict[str, list[tuple[float, int]]]:
        return {s: downsample(pts, SERIES_POINTS) for s, pts in self.points.items()}


def downsample(points: list[tuple[float, int]], limit: int) -> list[tuple[float, int]]:
    """At most ``limit`` points of a step series, keeping each time bucket's highest and last point.

    >>> downsample([(0.0, 1), (1.0, 5), (2.0, 2), (3.0, 0)], 2)
    [(1.0, 5), (3.0, 0)]
    """
    if len(points) <= limit:
        return list(points)
    buckets = max(1, limit // 2)
    t0, t1 = points[0][0], points[-1][0]
    width = (t1 - t0) / buckets or 1.0
    out: list[tuple[float, int]] = []
    k = 0
    while k < len(points):
        b = min(int((points[k][0] - t0) / width), buckets - 1)
        j = k
        while j + 1 < len(points) and min(int((points[j + 1][0] - t0) / width), buckets - 1) == b:
            j += 1
        high = max(range(k, j + 1), key=lambda i: points[i][1])
        out.extend(points[i] for i in sorted({high, j}))
        k = j + 1
    return out


def _stretched(life: Life, tasks: list[Task]) -> dict[str, Any]:
    until = tasks[life.until] if life.until is not None else None
    return {"tensor": life.tensor.name, "bytes": life.tensor.bytes, "stream": life.stretched_by,
            "until": until.name if until else None, "source": until.source if until else None,
            "own_until": tasks[life.own_until].name, "produced_on": life.stream}


def _unbounded(life: Life, tasks: list[Task], rule: str, last_alloc: dict[str, int]) -> dict[str, Any]:
    """A race when the producer's stream allocates again after the read (that block may be handed out
    while the read runs); under GE never (its static plan just keeps the block)."""
    stream, reader = life.unbounded_by or ("", 0)
    race = rule != "GE static plan" and last_alloc.get(life.stream, -1) > reader
    return {"tensor": life.tensor.name, "bytes": life.tensor.bytes, "produced_on": life.stream, "stream": stream,
            "reader": tasks[reader].name, "race": race}


def _last_alloc(lives: list[Life]) -> dict[str, int]:
    """Per stream, the last task that allocates a block on it."""
    out: dict[str, int] = {}
    for life in lives:
        if life.tensor.bytes and life.tensor.producer is not None:
            out[life.stream] = max(out.get(life.stream, -1), life.tensor.producer)
    return out


def _listed(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items.sort(key=lambda d: (-d["bytes"], d["tensor"]))
    return items[:LISTED]


def _notes(plan: ReplayPlan, found: GraphTensors, lives: list[Life], rule: str) -> list[str]:
    notes = []
    if plan.graph_model is None:
        notes.append("the plan has no graph (a measured plan): no tensors to size")
    if found.unsized:
        notes.append(f"{len(found.unsized)} kernel(s) record no static shape and count 0 bytes: "
                     f"{', '.join(found.unsized[:5])}")
    racy = [life for life in lives if life.unbounded_by]
    if racy:
        notes.append(f"{len(racy)} block(s) read on another stream are never ordered back to their own stream: "
                     "held to the graph's end" + (" (GE's plan never reuses them)" if rule == "GE static plan" else
                                                  "; those marked race may be handed out while still read"))
    if rule == "GE static plan":
        notes.append("GE's workspace is not in the graph and is not counted")
    return notes


def memory_delta(base: MemoryPrediction, plan: MemoryPrediction) -> dict[str, Any]:
    """What ``plan`` costs over ``base`` (the single-stream plan of the same graph): the peak's change
    and the tensors whose lives the plan's streams stretched or left unbounded (base had neither)."""
    before = {life.tensor.name for life in base.lives if life.stretched_by or life.unbounded_by}
    grew = [d for d in [*plan.stretched, *plan.unbounded] if d["tensor"] not in before]
    grew.sort(key=lambda d: (-d["bytes"], d["tensor"]))
    return {"delta_bytes": plan.peak_bytes - base.peak_bytes, "peak_bytes": plan.peak_bytes,
            "single_stream_peak_bytes": base.peak_bytes, "grew": grew}

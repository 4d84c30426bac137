"""The replay: one step of a plan on a model NPU, as a discrete-event simulation.

The model (docs/profile.md "Predicted profiles", the one statement of it):

1. each stream runs its tasks one at a time in program order;
2. a task starts as soon as its stream is free, every task it waits for (``Task.after``:
   record → wait, closure events, GE's control and cross-stream data edges) has finished, and the
   host has launched it (its *release*, :attr:`Resources.release_us`: measured from a profiler
   folder, or the host model of :mod:`.host`; none: the host is never late);
3. after a kernel, its stream spends ``gap_us`` before the next task may start (the device's
   dispatch gap between back-to-back tasks: measured from a profile, else 0); a wait is released
   ``latency_us`` after what it waits for finished (the event's latency: measured, else 0);
4. a kernel runs for its table time unless it shares a resource with kernels running beside it:

   - **cores**: the device's core pools (:meth:`~airctl.devices.Device.pools`: cube and
     vector apart on A2/A3 chips, one pool on coupled chips). A kernel states how many cores of
     which pool it uses (a mixed kernel, both); its demand is capped at the pool's size, so a
     kernel alone is never slowed (its time already holds its waves). When the running kernels'
     demand D on a pool exceeds its size C, each of them progresses at C / D; a kernel in two
     pools at the slower of the two. A kernel with no core count neither slows nor is slowed;
   - **bandwidth**: a memory-bound kernel moves its bytes at ``bytes / time`` alone (capped at the
     device's HBM bandwidth B). When the running memory-bound kernels' traffic T exceeds B, each
     of them progresses at B / T; compute-bound kernels take no share;

   the slowest of these factors is the kernel's rate;
5. markers and free tasks take no time.

Time advances from one event (a task's end, a gap's end, an arrival or a release) to the next, so
the result is exact for the model: no time step, no rounding beyond floating point. A plan whose
waits can never be satisfied (a wait on a record that comes later on its own stream's order, a
cycle through streams) is a deadlock: it raises :class:`ReplayDeadlock` naming the stuck streams
and what each waits for.

The result is a :class:`~airctl.execute.timeline.Timeline` (one step, times in seconds) whose
events are the kernels and markers and whose sync edges are the orderings that held, so the
summaries of :mod:`airctl.profile` apply unchanged.

>>> from airctl.predict.plan import KERNEL, ReplayPlan, Task
>>> plan = ReplayPlan("g", "reduce-overhead", "fx", [Task(0, "a", "aten.mm.default", "default", KERNEL),
...     Task(1, "b", "aten.mm.default", "s1", KERNEL),
...     Task(2, "c", "aten.add", "default", KERNEL, after=[(1, "record_wait")])])
>>> r = replay(plan, [10.0, 30.0, 5.0])
>>> [(e.node, round(e.start_s * 1e6, 6), round(e.end_s * 1e6, 6)) for e in r.timeline.events]
[('a', 0.0, 10.0), ('b', 0.0, 30.0), ('c', 30.0, 35.0)]
"""

from __future__ import annotations

from dataclasses import dataclass, field

from airctl.errors import AirctlError
from airctl.execute.timeline import OpEvent, SyncEdge, Timeline
from airctl.predict.plan import FREE, KERNEL, ReplayPlan

EPS = 1e-9  # µs: what counts as finished when work is shared


class ReplayDeadlock(AirctlError):
    """The plan's waits can never all be satisfied."""


@dataclass
class Resources:
    """What the kernels of a plan share, and when the host releases each task (all per task index).

    ``pools``: core pool -> cores (:meth:`Device.pools`); ``demand``: per task, pool -> cores it uses
    (None: no core count); ``bandwidth``: the device's HBM bytes per µs; ``traffic``: per task, the
    bytes per µs a memory-bound kernel moves alone (None: compute-bound or unknown); ``release_us``:
    per task, when the host has launched it (None: at once)."""

    pools: dict[str, float] = field(default_factory=dict)
    demand: list[dict[str, float] | None] | None = None
    bandwidth: float | None = None
    traffic: list[float | None] | None = None
    release_us: list[float | None] | None = None

    @classmethod
    def single_pool(cls, cores: list[float | None] | None, total: float | None) -> Resources:
        """One pool of ``total`` cores, each task's count from ``cores`` (a coupled chip; a CSV's cores)."""
        if not total or cores is None:
            return cls()
        return cls({"aicore": float(total)}, [None if c is None else {"aicore": float(c)} for c in cores])


@dataclass
class Replayed:
    timeline: Timeline
    start_us: list[float]
    end_us: list[float]
    span_us: float
    shared: bool = False  # whether sharing cores or bandwidth slowed any task
    notes: list[str] = field(default_factory=list)
    bandwidth_bound_us: float = 0.0  # time during which memory-bound kernels shared a saturated HBM
    core_bound_us: float = 0.0  # time during which a core pool was oversubscribed


def replay(plan: ReplayPlan, durations_us: list[float], cores: list[float | None] | None = None,
           total_cores: float | None = None, gap_us: float = 0.0, latency_us: float = 0.0,
           resources: Resources | None = None) -> Replayed:
    """Replay ``plan`` with each task's device time (µs). ``resources`` states the shared cores, bandwidth
    and host releases; ``cores``/``total_cores`` are the one-pool shorthand. ``gap_us`` is the dispatch
    gap after each kernel on its stream, ``latency_us`` an event's latency."""
    tasks = plan.tasks
    n = len(tasks)
    if len(durations_us) != n:
        raise ValueError("one duration per task")
    res = resources if resources is not None else Resources.single_pool(cores, total_cores)
    dur = [durations_us[i] if tasks[i].kind == KERNEL else 0.0 for i in range(n)]
    share = _Sharing(res, [t.kind == KERNEL for t in tasks])
    release = res.release_us or [None] * n
    queues: dict[str, list[int]] = {}
    for t in tasks:
        queues.setdefault(t.stream, []).append(t.index)
    head = dict.fromkeys(queues, 0)
    start = [-1.0] * n  # a wait's start is when its stream reaches it, its end when it is released
    end = [-1.0] * n  # -1: not finished
    running: dict[int, float] = {}  # task -> remaining work (µs at full speed)
    busy: dict[str, int | None] = dict.fromkeys(queues)
    cooling: dict[str, float] = {}  # stream -> when its dispatch gap ends
    now = 0.0
    while True:
        wake = _start_ready(queues, head, busy, tasks, end, start, running, dur, now, latency_us, release)
        if not running and not cooling and wake is None:
            break
        rates = share.rates(running)
        step = min([rem / rates[i] for i, rem in running.items()] + [t - now for t in cooling.values()] +
                   ([wake - now] if wake is not None else []))
        share.account(step)
        now += step
        for s in [s for s, t in cooling.items() if t <= now + EPS]:
            del cooling[s]
            busy[s] = None
        for i in list(running):
            running[i] -= step * rates[i]
            if running[i] <= EPS * max(1.0, dur[i]):
                del running[i]
                end[i] = now
                if gap_us > 0:
                    cooling[tasks[i].stream] = now + gap_us
                else:
                    busy[tasks[i].stream] = None
    stuck = {s: q[head[s]] for s, q in queues.items() if head[s] < len(q)}
    if stuck:
        raise ReplayDeadlock(_deadlock_message(plan, stuck, end),
                             hint="a wait on a record that never happens before it: `airctl check` names the cycle")
    return Replayed(_timeline(plan, start, end), start, end, max(end, default=0.0), share.shared,
                    bandwidth_bound_us=share.bw_bound_us, core_bound_us=share.core_bound_us)


class _Sharing:
    """Rule 4 of the model: each running kernel's rate from the pools and the bandwidth it shares."""

    def __init__(self, res: Resources, is_kernel: list[bool]) -> None:
        self.pools = res.pools
        n = len(is_kernel)
        demand = res.demand or [None] * n
        # a kernel's demand on a pool is capped at the pool: alone, it is never slowed
        self.demand = [{p: min(c, self.pools[p]) for p, c in (demand[i] or {}).items() if p in self.pools and c > 0}
                       if is_kernel[i] else {} for i in range(n)]
        self.bandwidth = res.bandwidth or 0.0
        traffic = res.traffic or [None] * n
        self.traffic = [min(traffic[i], self.bandwidth) if is_kernel[i] and traffic[i] and self.bandwidth else 0.0
                        for i in range(n)]
        self.shared = False
        self.bw_bound_us = self.core_bound_us = 0.0
        self._bw_saturated = self._cores_over = False

    def rates(self, running: dict[int, float]) -> dict[int, float]:
        load: dict[str, float] = {}
        traffic = 0.0
        for i in running:
            for p, c in self.demand[i].items():
                load[p] = load.get(p, 0.0) + c
            traffic += self.traffic[i]
        over = {p: self.pools[p] / d for p, d in load.items() if d > self.pools[p] * (1 + EPS)}
        bw = self.bandwidth / traffic if self.bandwidth and traffic > self.bandwidth * (1 + EPS) else 1.0
        self._cores_over, self._bw_saturated = bool(over), bw < 1.0
        out: dict[int, float] = {}
        for i in running:
            rate = min([over[p] for p in self.demand[i] if p in over], default=1.0)
            if self.traffic[i]:
                rate = min(rate, bw)
            out[i] = rate
            self.shared = self.shared or rate < 1.0
        return out

    def account(self, step: float) -> None:
        if self._bw_saturated:
            self.bw_bound_us += step
        if self._cores_over:
            self.core_bound_us += step


def _start_ready(queues: dict[str, list[int]], head: dict[str, int], busy: dict[str, int | None],
                 tasks: list, end: list[float], start: list[float], running: dict[int, float],
                 dur: list[float], now: float, latency: float, release: list[float | None]) -> float | None:
    """Start every stream's next task whose waits are over and whose host launch has happened;
    zero-time tasks finish at once. Returns the earliest later time at which a waiting task's events
    arrive or a task is released (None: none pending)."""
    progress = True
    wake: float | None = None
    while progress:
        progress = False
        wake = None
        for s, q in queues.items():
            while busy[s] is None and head[s] < len(q):
                i = q[head[s]]
                after = tasks[i].after
                if start[i] < 0 and dur[i] <= 0.0:
                    start[i] = now  # a marker blocks from here
                if any(end[j] < 0 for j, _ in after):
                    break
                ready = max((end[j] + latency for j, _ in after), default=now) if latency else now
                if release[i] is not None and release[i] > ready:
                    ready = release[i]
                if ready > now + EPS:
                    wake = ready if wake is None else min(wake, ready)
                    break
                head[s] += 1
                if dur[i] > 0.0 or start[i] < 0:
                    start[i] = now
                if dur[i] <= 0.0:
                    end[i] = now
                    progress = True
                    continue
                running[i] = dur[i]
                busy[s] = i
    return wake


def _deadlock_message(plan: ReplayPlan, stuck: dict[str, int], end: list[float]) -> str:
    parts = []
    for s, i in stuck.items():
        t = plan.tasks[i]
        waits = [plan.tasks[j].name for j, _ in t.after if end[j] < 0]
        parts.append(f"{t.name} on {s} waits for {', '.join(waits) or '?'}")
    return f"{plan.graph}: the plan deadlocks: " + "; ".join(parts)


def _timeline(plan: ReplayPlan, start: list[float], end: list[float]) -> Timeline:
    events: list[OpEvent] = []
    syncs: list[SyncEdge] = []
    for t in plan.tasks:
        if t.kind == FREE:
            continue
        events.append(OpEvent(t.name, t.op, t.stream, start[t.index] * 1e-6, end[t.index] * 1e-6, t.source,
                              t.module, 0, "communication" if t.meta.get("comm") else None))
    shown = _shown_sources(plan)
    for t in plan.tasks:
        for j, kind in t.after:
            src = shown[j]
            if src is None or t.kind == FREE:
                continue
            s = plan.tasks[src]
            syncs.append(SyncEdge(kind, s.name, t.name, s.stream, t.stream, end[j] * 1e-6, 0))
    return Timeline(plan.graph, str(plan.mode), events, syncs, [], steps=1, step_seconds=[],
                    meta={"predicted": True, "stage": plan.stage, "simulated": False})


def _shown_sources(plan: ReplayPlan) -> list[int | None]:
    """Per task, the task a sync edge from it is drawn from: itself, or for a free task (a view) the
    last shown task before it on its stream (None at the stream's start)."""
    last: dict[str, int] = {}
    out: list[int | None] = []
    for t in plan.tasks:
        if t.kind != FREE:
            last[t.stream] = t.index
        out.append(last.get(t.stream))
    return out

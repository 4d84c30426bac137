"""The replay: one step of a plan on a model NPU, as a discrete-event simulation.

The model (docs/profile.md "Predicted profiles", the one statement of it):

1. each stream runs its tasks one at a time in program order;
2. a task starts as soon as its stream is free and every task it waits for (``Task.after``:
   record → wait, closure events, GE's control and cross-stream data edges) has finished;
3. after a kernel, its stream spends ``gap_us`` before the next task may start (the device's
   dispatch gap between back-to-back tasks: measured from a profile, else 0); a wait is released
   ``latency_us`` after what it waits for finished (the event's latency: measured, else 0);
4. a task runs for its table time, alone on the device or not, unless cores are known: when the
   device's core count ``total_cores`` is given and tasks state how many cores they use, the tasks
   running at one moment share the cores — if their demand D exceeds the total C, each progresses
   at rate C / D (a plan on a saturated device gains nothing); a task with no core count neither
   slows others nor is slowed;
5. markers and free tasks take no time.

Time advances from one task's end to the next, so the result is exact for the model: no time
step, no rounding beyond floating point. A plan whose waits can never be satisfied (a wait on a
record that comes later on its own stream's order, a cycle through streams) is a deadlock: it
raises :class:`ReplayDeadlock` naming the stuck streams and what each waits for.

The result is a :class:`~airctl.execute.timeline.Timeline` (one step, times in seconds) whose
events are the kernels and markers and whose sync edges are the orderings that held, so the
summaries of :mod:`airctl.profile` apply unchanged.

>>> from airctl.predict.plan import KERNEL, ReplayPlan, Task
>>> plan = ReplayPlan("g", "reduce-overhead", "fx", [Task(0, "a", "aten.mm", "default", KERNEL),
...     Task(1, "b", "aten.mm", "s1", KERNEL), Task(2, "c", "aten.add", "default", KERNEL, after=[(1, "record_wait")])])
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
class Replayed:
    timeline: Timeline
    start_us: list[float]
    end_us: list[float]
    span_us: float
    shared: bool = False  # whether core sharing slowed any task
    notes: list[str] = field(default_factory=list)


def replay(plan: ReplayPlan, durations_us: list[float], cores: list[float | None] | None = None,
           total_cores: float | None = None, gap_us: float = 0.0, latency_us: float = 0.0) -> Replayed:
    """Replay ``plan`` with each task's device time (µs); ``cores``/``total_cores`` for sharing,
    ``gap_us`` the dispatch gap after each kernel on its stream, ``latency_us`` an event's latency."""
    tasks = plan.tasks
    n = len(tasks)
    if len(durations_us) != n:
        raise ValueError("one duration per task")
    dur = [durations_us[i] if tasks[i].kind == KERNEL else 0.0 for i in range(n)]
    demand = [(cores[i] if cores is not None and tasks[i].kind == KERNEL else None) for i in range(n)]
    queues: dict[str, list[int]] = {}
    for t in tasks:
        queues.setdefault(t.stream, []).append(t.index)
    head = dict.fromkeys(queues, 0)
    start = [-1.0] * n  # a wait's start is when its stream reaches it, its end when it is released
    end = [-1.0] * n  # -1: not finished
    running: dict[int, float] = {}  # task -> remaining work (µs at full speed)
    busy: dict[str, int | None] = dict.fromkeys(queues)
    cooling: dict[str, float] = {}  # stream -> when its dispatch gap ends
    now, shared = 0.0, False
    while True:
        wake = _start_ready(queues, head, busy, tasks, end, start, running, dur, now, latency_us)
        if not running and not cooling and wake is None:
            break
        rate = _rate(running, demand, total_cores)
        shared = shared or rate < 1.0
        step = min([rem / rate for rem in running.values()] + [t - now for t in cooling.values()] +
                   ([wake - now] if wake is not None else []))
        now += step
        for s in [s for s, t in cooling.items() if t <= now + EPS]:
            del cooling[s]
            busy[s] = None
        for i in list(running):
            running[i] -= step * rate
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
    return Replayed(_timeline(plan, start, end), start, end, max(end, default=0.0), shared)


def _start_ready(queues: dict[str, list[int]], head: dict[str, int], busy: dict[str, int | None],
                 tasks: list, end: list[float], start: list[float], running: dict[int, float],
                 dur: list[float], now: float, latency: float) -> float | None:
    """Start every stream's next task whose waits are over; zero-time tasks finish at once. Returns
    the earliest later time at which a waiting task's events arrive (None: none pending)."""
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


def _rate(running: dict[int, float], demand: list[float | None], total: float | None) -> float:
    """How fast the running tasks progress: 1, or total / demand when their cores oversubscribe."""
    if not total:
        return 1.0
    need = sum(demand[i] or 0.0 for i in running)
    return 1.0 if need <= total else total / need


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
    return Timeline(plan.graph, plan.mode, events, syncs, [], steps=1, step_seconds=[],
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

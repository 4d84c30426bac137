"""Per step: computing, communication, overlapped, free — as the profiler defines them, exactly.

Definitions (torch_npu's ``step_trace_time.csv``, docs/profile.md §Step breakdown), per device:

- **C** = union of the compute tasks' intervals (kernels; not ``*AicpuKernel``/``*AivKernel``),
  **M** = union of the communication ops' intervals (HCCL op rows);
- Computing = |C|, Communication = |M|, Communication(Not Overlapped) = |M \\ C|,
  **Overlapped** = Communication − Not Overlapped = |M ∩ C| (communication hidden under compute);
- Free = the gaps between the merged C ∪ M intervals over the profiled device time;
- Bubble = Σ duration of ``hcom_receive*`` ops; Stage = (last end − first start of what the step
  counts) − Bubble;
- each interval counts wholly for the step whose window holds its start; a step's window runs
  from its first task's start to the later of its last task's end and its host ``ProfilerStep``'s end.

All arithmetic is on integer ns; µs appear only in :meth:`StepBreakdown.to_json`.

>>> from airctl.profile.ascend.model import Task
>>> b = breakdown([Task("mm", "MatMul", "2", 0, 10_000, 1), Task("ar", "allReduce", "8", 6_000, 8_000, 1, comm=True)])
>>> b[0].to_json()["overlapped_us"], b[0].to_json()["communication_not_overlapped_us"]
(4.0, 4.0)
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from airctl.profile.ascend.model import ProfilerStepRow, Task
from airctl.profile.ascend.times import ns_to_us
from airctl.profile.events import union

Interval = tuple[int, int]
# ours -> the profiler's column
METRIC_COLUMN = {"computing": "Computing", "communication_not_overlapped": "Communication(Not Overlapped)",
                 "overlapped": "Overlapped", "communication": "Communication", "free": "Free", "bubble": "Bubble",
                 "stage": "Stage"}


@dataclass
class StepBreakdown:
    step: int
    start_ns: int
    end_ns: int
    computing: int = 0
    communication: int = 0
    communication_not_overlapped: int = 0
    free: int = 0
    bubble: int = 0
    first_ns: int | None = None
    last_ns: int | None = None

    @property
    def overlapped(self) -> int:
        return self.communication - self.communication_not_overlapped

    @property
    def stage(self) -> int:
        span = (self.last_ns - self.first_ns) if self.first_ns is not None and self.last_ns is not None else 0
        return span - self.bubble

    def value(self, metric: str) -> int:
        return int(getattr(self, metric))

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "window_us": ns_to_us(self.end_ns - self.start_ns),
                **{f"{m}_us": ns_to_us(self.value(m)) for m in METRIC_COLUMN}}


def subtract(xs: Sequence[Interval], ys: Sequence[Interval]) -> list[Interval]:
    """Merged ``xs`` minus merged ``ys``."""
    out: list[Interval] = []
    j = 0
    for a, b in xs:
        cur = a
        while j < len(ys) and ys[j][1] <= cur:
            j += 1
        k = j
        while k < len(ys) and ys[k][0] < b:
            if ys[k][0] > cur:
                out.append((cur, ys[k][0]))
            cur = max(cur, ys[k][1])
            k += 1
        if cur < b:
            out.append((cur, b))
    return out


def breakdown(tasks: list[Task], host_steps: dict[int, tuple[int, int]] | None = None) -> list[StepBreakdown]:
    """The steps' numbers. Streams over the tasks sorted once by start: only the merged compute and
    communication intervals are held (a million tasks cost no lists of tuples per metric), and each
    interval finds its step by bisection when the step windows are disjoint (else by the first window
    that holds it, as always)."""
    work = sorted((t for t in tasks if not t.is_marker), key=lambda t: t.start_ns)
    compute = _merged((t.start_ns, t.end_ns) for t in work if not t.comm
                      and not t.name.endswith(("AicpuKernel", "AivKernel")))
    comm = _merged((t.start_ns, t.end_ns) for t in work if t.comm and not t.name.endswith("AivKernel"))
    steps: dict[int, StepBreakdown] = {}
    for t in work:
        s = steps.setdefault(t.step or 0, StepBreakdown(t.step or 0, t.start_ns, t.end_ns))
        s.end_ns = max(s.end_ns, t.end_ns)
    for number, s in steps.items():
        host = (host_steps or {}).get(number)
        if host is not None:
            s.end_ns = max(s.end_ns, host[1])
    order = sorted(steps.values(), key=lambda s: s.step)
    find = _step_finder(order)

    def count(intervals: Iterable[Interval], metric: str | None) -> None:
        for a, b in intervals:
            s = find(a)
            if s is None:
                continue
            if metric:
                setattr(s, metric, getattr(s, metric) + b - a)
            s.first_ns = a if s.first_ns is None else min(s.first_ns, a)
            s.last_ns = b if s.last_ns is None else max(s.last_ns, b)

    count(compute, "computing")
    count(comm, "communication")
    count(subtract(comm, compute), "communication_not_overlapped")
    count(_gaps(_merged(heapq.merge(compute, comm))), "free")
    count(((t.start_ns, t.end_ns) for t in work if t.comm and t.name.startswith("hcom_receive")), "bubble")
    return order


class _Merged:
    """Merged intervals as two int64 arrays (16 bytes each, not a tuple and an int: a long profile's
    union of kernels is a million intervals); reads like a list of ``(start, end)`` tuples."""

    def __init__(self) -> None:
        self.starts, self.ends = array("q"), array("q")

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, k: int) -> Interval:
        return self.starts[k], self.ends[k]

    def __iter__(self) -> Iterator[Interval]:
        return zip(self.starts, self.ends, strict=True)


def _merged(sorted_intervals: Iterable[Interval]) -> Sequence[Interval]:
    """:func:`~airctl.profile.events.union` of intervals that come sorted by start (nothing else is
    held); times beyond int64 (no clock gives them) fall back to a list."""
    items = iter(sorted_intervals)
    out = _Merged()
    try:
        for a, b in items:
            if out.starts and a <= out.ends[-1]:
                if b > out.ends[-1]:
                    out.ends[-1] = b
            else:
                out.starts.append(a)
                out.ends.append(b)
    except OverflowError:
        del out.starts[len(out.ends):]  # a start appended without its end
        return union([*out, (a, b), *items])
    return out


def _gaps(merged: Sequence[Interval]) -> Iterator[Interval]:
    for k in range(1, len(merged)):
        yield merged[k - 1][1], merged[k][0]


def _step_finder(order: list[StepBreakdown]) -> Callable[[int], StepBreakdown | None]:
    """The first step of ``order`` whose window holds a time: by bisection when the windows are sorted and
    disjoint (the usual case), else by a scan."""
    starts = [s.start_ns for s in order]
    disjoint = all(a.start_ns <= a.end_ns <= b.start_ns for a, b in itertools.pairwise(order))
    if not disjoint:
        return lambda a: next((s for s in order if s.start_ns <= a < s.end_ns), None)

    def find(a: int) -> StepBreakdown | None:
        k = bisect.bisect_right(starts, a) - 1
        return order[k] if k >= 0 and a < order[k].end_ns else None
    return find


def check(ours: list[StepBreakdown], rows: list[ProfilerStepRow], device: int | None, source: str) -> dict[str, Any]:
    """Our numbers next to the profiler's, step by step; ``max_diff_pct`` per metric."""
    devices = {r.device for r in rows}
    if device in devices:
        rows = [r for r in rows if r.device == device]
    elif len(devices) > 1:
        first = sorted(devices, key=lambda d: (d is None, d or 0))[0]
        rows = [r for r in rows if r.device == first]
    by_step = {r.step: r for r in rows}
    if len(rows) == 1 and len(ours) == 1 and rows[0].step is None:
        by_step = {ours[0].step: rows[0]}
    steps: list[dict[str, Any]] = []
    worst: dict[str, float] = {}
    for s in ours:
        row = by_step.get(s.step)
        if row is None:
            continue
        entry: dict[str, Any] = {"step": s.step}
        for metric, column in METRIC_COLUMN.items():
            if column not in row.values:
                continue
            mine, theirs = ns_to_us(s.value(metric)), row.values[column]
            diff = abs(mine - theirs)
            pct = 0.0 if diff < 0.0005 else (100 * diff / abs(theirs) if theirs else None)
            entry[metric] = {"airctl_us": mine, "profiler_us": theirs, "diff_pct": pct}
            worst[metric] = max(worst.get(metric, 0.0), float("inf") if pct is None else pct)
        steps.append(entry)
    return {"against": source, "steps": steps,
            "max_diff_pct": {m: (None if v == float("inf") else v) for m, v in worst.items()},
            "unmatched_steps": sorted(s.step for s in ours if s.step not in by_step)}

"""The torch trace read back as what the Ascend tables list: spans, kernels, steps and streams.

The layout is built from the Chrome trace torch wrote rather than from ``profile.events()``:
with ``with_stack=True`` torch 2.13 intermittently returns corrupted event names from
``events()``, while the exported trace is sound. A "kernel" is an ATen op the program called
(no ATen op encloses it on its thread): on an NPU each is a launched kernel.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass
from typing import Any


@dataclass
class Span:
    """One complete ("X") event of the exported Chrome trace; times in microseconds."""

    name: str
    cat: str
    tid: Any
    start: float
    dur: float

    @property
    def end(self) -> float:
        return self.start + self.dur


def spans_of(doc: Any) -> list[Span]:
    """The complete ("X") events of the Chrome trace document torch wrote."""
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    return [Span(str(e.get("name", "")), str(e.get("cat", "")), e.get("tid", 0), float(e.get("ts", 0.0)),
                  float(e.get("dur", 0.0)))
            for e in events if isinstance(e, dict) and e.get("ph") == "X"]


def step_ranges(spans: list[Span], steps: list[int]) -> list[tuple[int, float, float]]:
    """(step, start, end) per ``ProfilerStep#N`` range, numbered as the profiler recorded them."""
    ranges = sorted((s for s in spans if s.name.startswith("ProfilerStep")), key=lambda s: s.start)
    out = []
    for i, s in enumerate(ranges):
        number = s.name.partition("#")[2]
        step = int(number) if number.isdigit() else (steps[i] if i < len(steps) else i)
        out.append((step, s.start, s.end))
    return out


def kernels_of(spans: list[Span]) -> list[Span]:
    """ATen ops the program called (no ATen op encloses them on their thread): on an NPU each is
    a launched kernel; the ATen calls they make internally are host-side details of the CPU."""
    out: list[Span] = []
    by_thread: dict[Any, list[Span]] = defaultdict(list)
    for s in spans:
        if s.name.startswith("aten::"):
            by_thread[s.tid].append(s)
    for ops in by_thread.values():
        open_until = float("-inf")
        for s in sorted(ops, key=lambda s: (s.start, -s.dur)):
            if s.start >= open_until:
                out.append(s)
                open_until = s.end
    return sorted(out, key=lambda s: s.start)


def streams_of(spans: list[Span], kernels: list[Span]) -> list[str]:
    """The stream each kernel ran on: the executor wraps every op it runs serially under the
    profiler in a ``record_function`` named ``airctl.stream::<stream>``; outside one: ``default``."""
    from airctl.execute.executor import STREAM_MARK

    marks: dict[Any, list[Span]] = defaultdict(list)
    for s in spans:
        if s.name.startswith(STREAM_MARK):
            marks[s.tid].append(s)
    for lst in marks.values():
        lst.sort(key=lambda s: s.start)
    starts = {tid: [s.start for s in lst] for tid, lst in marks.items()}
    out = []
    for k in kernels:
        lst = marks.get(k.tid)
        name = "default"
        if lst:
            at = bisect.bisect_right(starts[k.tid], k.start) - 1
            if at >= 0 and lst[at].end >= k.end:
                name = lst[at].name[len(STREAM_MARK):]
        out.append(name)
    return out

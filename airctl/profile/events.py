"""Step-level helpers shared by the summaries, the Chrome trace and the picture.

A :class:`Timeline` holds every profiled step; times restart at 0 in each step. These helpers cut
it into steps, measure interval unions and resolve a :class:`SyncEdge` to the two events it orders
(by node name, else by time on the two streams — a fork from the graph's inputs has no source op).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from statistics import median

from airctl.execute.timeline import OpEvent, SyncEdge, Timeline

# Ops that order streams or mark scopes rather than compute: TorchAir's air.* ops and npugraph_ex's copies
# (record, wait,
# scope_enter/exit), torch.npu events, and the NPU's event/notify tasks. A wait's duration is time
# spent blocked, so these count as neither busy time nor critical-path work.
_MARKER = re.compile(r"^(air\.|npugraph_ex\.|torch\.npu\.(Event|Stream)\.|(EVENT|NOTIFY)_(RECORD|WAIT)$"
                     r"|StreamWaitEvent$)", re.IGNORECASE)


def is_marker(op: str) -> bool:
    """True for ops that only synchronise or mark scopes.

    >>> is_marker("air.wait.default"), is_marker("EVENT_RECORD"), is_marker("aten.mm.default")
    (True, True, False)
    """
    return bool(_MARKER.match(op))


def work_s(e: OpEvent) -> float:
    """The time an op computes: its duration, 0 for markers (a wait's length is blocked time)."""
    return 0.0 if is_marker(e.op) else e.end_s - e.start_s


def step_ids(timeline: Timeline) -> list[int]:
    return sorted({e.step for e in timeline.events})


def step_events(timeline: Timeline, step: int) -> list[OpEvent]:
    """The events of one step in start order (ties: shorter first, so zero-length record/wait lead)."""
    return sorted((e for e in timeline.events if e.step == step), key=lambda e: (e.start_s, e.end_s))


def step_syncs(timeline: Timeline, step: int) -> list[SyncEdge]:
    return [s for s in timeline.syncs if s.step == step]


def span(events: Iterable[OpEvent]) -> tuple[float, float]:
    """(first start, last end) of the events; (0, 0) for none."""
    evs = list(events)
    if not evs:
        return 0.0, 0.0
    return min(e.start_s for e in evs), max(e.end_s for e in evs)


def union(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """Merged, sorted, non-overlapping intervals.

    >>> union([(0, 2), (1, 3), (5, 6)])
    [(0, 3), (5, 6)]
    """
    out: list[tuple[float, float]] = []
    for a, b in sorted(intervals):
        if b < a:
            a, b = b, a
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def length(intervals: Iterable[tuple[float, float]]) -> float:
    return sum(b - a for a, b in intervals)


def overlap(per_stream: dict[str, list[tuple[float, float]]], at_least: int = 2) -> float:
    """Time during which at least ``at_least`` streams are busy (each stream's intervals merged first).

    >>> overlap({"a": [(0, 4)], "b": [(2, 6)], "c": [(3, 5)]})
    3.0
    """
    marks: list[tuple[float, int]] = []
    for intervals in per_stream.values():
        for a, b in union(intervals):
            marks += [(a, 1), (b, -1)]
    marks.sort(key=lambda m: (m[0], m[1]))  # ends before starts at the same instant: touching is not overlap
    total, busy, last = 0.0, 0, 0.0
    for t, d in marks:
        if busy >= at_least:
            total += t - last
        busy += d
        last = t
    return total


def representative_step(timeline: Timeline) -> int | None:
    """The step whose span is the median one (the later on ties): what the picture and the
    critical path show, so that one slow first step does not speak for the run."""
    ids = step_ids(timeline)
    if not ids:
        return None
    spans = {s: (lambda a_b: a_b[1] - a_b[0])(span(step_events(timeline, s))) for s in ids}
    mid = median(sorted(spans.values()))
    return min(ids, key=lambda s: (abs(spans[s] - mid), -s))


def first_by_name(events: list[OpEvent]) -> dict[str, int]:
    """Each node's first index in ``events``: what :func:`resolve_sync` looks names up in."""
    return {e.node: i for i, e in reversed(list(enumerate(events)))}


def resolve_sync(events: list[OpEvent], sync: SyncEdge, by_name: dict[str, int]) -> tuple[int, int] | None:
    """Indices into ``events`` (one step, start order) of the ops a sync edge orders, or None.

    By name first (``by_name``: :func:`first_by_name` of ``events``, built once for all the step's
    syncs); otherwise the last op on ``src_stream`` ending by ``time_s`` and the first op on
    ``dst_stream`` starting at or after it."""
    src = by_name.get(sync.src)
    dst = by_name.get(sync.dst)
    if src is None:
        cands = [i for i, e in enumerate(events) if e.stream == sync.src_stream and e.end_s <= sync.time_s]
        src = cands[-1] if cands else None
    if dst is None:
        ref = events[src].end_s if src is not None else sync.time_s
        cands = [i for i, e in enumerate(events) if e.stream == sync.dst_stream and e.start_s >= min(ref, sync.time_s)]
        dst = cands[0] if cands else None
    if src is None or dst is None or src == dst:
        return None
    return src, dst


def resolved_syncs(timeline: Timeline, step: int, events: list[OpEvent]) -> Iterator[tuple[SyncEdge, int, int]]:
    """Each sync edge of ``step`` that :func:`resolve_sync` finds in ``events`` (that step's), with the
    indices of its source and destination op."""
    by_name = first_by_name(events)
    for sync in step_syncs(timeline, step):
        pair = resolve_sync(events, sync, by_name)
        if pair is not None:
            yield sync, pair[0], pair[1]

"""TIMES from a torch_npu profiler folder: measured kernel times, and the device's dispatch gap.

Profile once — single-stream is enough — and predict any plan: each task of the folder is linked
to the run's nodes as ``airctl profile analyze --ledger`` links them (a GE op's name, an FX node's
name, or the n-th ``aten::mm`` to the n-th ``aten.mm`` node), and every node gets the mean of its
tasks' durations over the profiled steps; tasks that link to no node give their op type a time
(the mean per ``Type``), so a node the profile did not see by name still finds its op's.

The dispatch gap — the idle time between two back-to-back tasks of one stream when the second
waits for nothing — is a property of the device and the mode, not of the plan: the median of those
gaps is what the replay puts after each kernel (:func:`dispatch_gap_us`).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from statistics import median

from airctl.execute.timeline import Timeline
from airctl.predict.times import Row, TimesTable
from airctl.profile import events as ev


def profile_timeline(folder: Path, ledger: Path | None) -> tuple[Timeline, list[str]]:
    """The first rank's timeline of ``folder`` (tasks linked to ``ledger``'s nodes), and notes."""
    from airctl.profile.analyze import analyze

    analysis = analyze(Path(folder), ledger)
    notes = list(analysis.warnings)
    if len(analysis.ranks) > 1:
        notes.append(f"{folder}: {len(analysis.ranks)} ranks; the times are rank "
                     f"{analysis.ranks[0].rank}'s (give one rank's folder for another)")
    return analysis.ranks[0].timeline, notes


def profile_table(timeline: Timeline, source: str) -> TimesTable:
    """Mean measured µs per node (task name after linking) and per op type, over every step."""
    steps = max(len(ev.step_ids(timeline)), 1)
    by_node: dict[str, list[float]] = defaultdict(list)
    by_op: dict[str, list[float]] = defaultdict(list)
    for e in timeline.events:
        if ev.is_marker(e.op):
            continue
        us = max(e.end_s - e.start_s, 0.0) * 1e6
        by_node[e.node].append(us)
        by_op[e.op].append(us)
    table = TimesTable(source, "node", label="profile")
    # a node that ran k times a step (a loop unrolled, or tasks of one op) takes k calls' time
    table.rows = {n: Row(sum(v) / steps, None, 0) for n, v in by_node.items()}
    table.op_rows = {op: Row(sum(v) / len(v), None, 0) for op, v in by_op.items()}
    return table


def dispatch_gap_us(timeline: Timeline) -> float:
    """The median idle time between back-to-back tasks of a stream where the second waits for
    nothing (0 when the profile has no such pair)."""
    gaps: list[float] = []
    for step in ev.step_ids(timeline):
        events = [e for e in ev.step_events(timeline, step) if not ev.is_marker(e.op)]
        waited = set()
        for sync in ev.step_syncs(timeline, step):
            waited.add(sync.dst)
        last: dict[str, float] = {}
        for e in events:
            if e.stream in last and e.node not in waited:
                gap = e.start_s - last[e.stream]
                if gap >= 0:
                    gaps.append(gap * 1e6)
            last[e.stream] = max(last.get(e.stream, e.end_s), e.end_s)
    return median(gaps) if gaps else 0.0


def event_latency_us(timeline: Timeline) -> float:
    """The median time from the end of what a blocked wait waited for to the wait's release (0 when
    no wait was blocked)."""
    lat: list[float] = []
    for step in ev.step_ids(timeline):
        events = ev.step_events(timeline, step)
        for _, i, j in ev.resolved_syncs(timeline, step, events):
            src, dst = events[i], events[j]
            if ev.is_marker(dst.op) and dst.end_s > dst.start_s and dst.end_s >= src.end_s:
                lat.append((dst.end_s - src.end_s) * 1e6)
    return median(lat) if lat else 0.0

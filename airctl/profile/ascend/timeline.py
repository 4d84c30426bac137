"""One rank's tasks as a :class:`~airctl.execute.timeline.Timeline`, the shape every summary,
trace and picture of ``airctl profile`` reads.

Times restart at 0 in each step and become seconds only here, from integer ns differences (so
they are exact to far below a nanosecond). Task names are made unique per step (``MatMul``,
``MatMul#2``). Communication ops carry ``kind="communication"``. Sync edges are inferred: each
event wait is paired with the latest event record on another stream that ended before the wait did.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from operator import attrgetter

from airctl.execute.timeline import OpEvent, SyncEdge, TaskFacts, Timeline
from airctl.profile.ascend.model import RankData, Task

RECORD = re.compile(r"(EVENT|NOTIFY)_?RECORD|^air\.record", re.IGNORECASE)
WAIT = re.compile(r"(EVENT|NOTIFY)_?WAIT|StreamWaitEvent|^air\.wait", re.IGNORECASE)


def to_timeline(data: RankData, graph: str, consume: bool = False) -> Timeline:
    """The rank's timeline. ``consume``: ``data.tasks`` is emptied and each task freed once its event exists
    (a profile of a million tasks then never holds both at once)."""
    tasks: list[Task | None] = _by_step_start_end(data.tasks)  # type: ignore[assignment]
    if consume:
        data.tasks = []
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for t in tasks:
        s = t.step or 0
        first[s] = min(first.get(s, t.start_ns), t.start_ns)
        last[s] = max(last.get(s, t.end_ns), t.end_ns)
    names = _unique_names(tasks)
    pairs = infer_syncs(tasks)
    events = []
    facts = TaskFacts()
    for i, t in enumerate(tasks):
        assert t is not None
        t0 = first[t.step or 0]
        events.append(OpEvent(node=names[i], op=t.type or t.name, stream=t.stream or "?",
                              start_s=(t.start_ns - t0) / 1e9, end_s=(t.end_ns - t0) / 1e9,
                              step=t.step or 0, kind="communication" if t.comm else None))
        facts.launch_s.append(None if t.launch_ns is None else (t.launch_ns - t0) / 1e9)
        facts.core.append(t.core)
        facts.blocks.append(t.blocks)
        if consume:
            tasks[i] = None
    count = len(tasks)
    del names, tasks
    syncs = [SyncEdge("event", events[r].node, events[w].node, events[r].stream, events[w].stream, events[r].end_s,
                      events[w].step) for r, w in pairs]
    meta = {"folder": str(data.folder), "rank": data.rank, "tasks_from": data.tasks_from,
            "streams_from": dict(data.streams_from), "tasks": count, "simulated": data.simulated,
            "syncs": "inferred from event record/wait tasks"}
    meta["launches"] = data.launches
    return Timeline(graph=graph, mode="npu-profile", events=events, syncs=syncs, steps=len(first),
                    step_seconds=[(last[s] - first[s]) / 1e9 for s in sorted(first)], meta=meta, facts=facts)


def _by_step_start_end(tasks: list[Task]) -> list[Task]:
    """``tasks`` sorted by (step, start, end), by three stable sorts on one key each: a million (step, start,
    end) key tuples would cost a hundred megabytes for the length of the sort."""
    out = sorted(tasks, key=lambda t: t.end_ns)
    out.sort(key=attrgetter("start_ns"))
    out.sort(key=lambda t: t.step or 0)
    return out


def infer_syncs(tasks: list[Task]) -> list[tuple[int, int]]:
    """(record index, wait index): each wait with the latest record on another stream, same step,
    that ended no later than the wait did."""
    records: dict[int, list[tuple[int, int]]] = defaultdict(list)  # step -> [(end, index)] by end
    for i, t in enumerate(tasks):
        if RECORD.search(t.name) or RECORD.search(t.type):
            records[t.step or 0].append((t.end_ns, i))
    for lst in records.values():
        lst.sort()
    pairs = []
    for i, t in enumerate(tasks):
        if not (WAIT.search(t.name) or WAIT.search(t.type)):
            continue
        lst = records.get(t.step or 0, [])
        k = bisect.bisect_right(lst, (t.end_ns, len(tasks))) - 1
        while k >= 0 and tasks[lst[k][1]].stream == t.stream:
            k -= 1
        if k >= 0:
            pairs.append((lst[k][1], i))
    return pairs


def _unique_names(tasks: list[Task]) -> list[str]:
    seen: dict[tuple[int, str], int] = defaultdict(int)
    out = []
    for t in tasks:
        seen[(t.step or 0, t.name)] += 1
        n = seen[(t.step or 0, t.name)]
        out.append(t.name if n == 1 else f"{t.name}#{n}")
    return out

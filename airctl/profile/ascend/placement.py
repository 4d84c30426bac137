"""Streams for the tasks whose table does not say: Level0 rows (no ``Stream ID`` column) and
communication rows (``Stream ID`` ``N/A``), taken from ``trace_view.json``'s hardware lanes.

- A compute row goes on the ``Ascend Hardware`` lane holding an event of the same start time
  (and name, when several start together) — both files carry the same µs text.
- A communication op goes, first match wins, on (1) the hardware lane holding an event of its
  name inside its time window; (2) the ``stream id`` its ``Plane`` tasks report (Level1/2); (3) the
  hardware lane that runs the most non-compute task time inside its window (Level0's trace keeps
  the op's tasks on their stream but drops the planes).
- Whatever stays unplaced goes on a lane named ``unplaced`` (compute) or ``hccl`` (communication),
  with a warning — never on a stream named ``N/A``.

Event record/wait tasks of the hardware lanes are added as markers, so that sync edges between
compute and communication streams can be inferred (:mod:`airctl.profile.ascend.timeline`).
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict

from airctl.profile.ascend.model import EVENT_TASK, Issues, Task
from airctl.profile.ascend.trace import Span, TraceView

UNPLACED = "unplaced"
COMM_LANE = "hccl"


def place_streams(tasks: list[Task], trace: TraceView | None, issues: Issues, given: str) -> dict[str, str]:
    """Give every task a stream; returns where the streams came from, for compute and communication
    (``given``: where the tasks that had one got it, e.g. ``kernel_details.csv Stream ID``)."""
    said = {"compute": given, "communication": given}
    compute = [t for t in tasks if t.stream is None and not t.comm]
    comm = [t for t in tasks if t.stream is None and t.comm]
    hw = trace.hardware if trace else []
    if compute:
        said["compute"] = _place_compute(compute, hw)
    if comm:
        said["communication"] = _place_comm(comm, trace, tasks)
    for kind, lane, group in (("compute", UNPLACED, compute), ("communication", COMM_LANE, comm)):
        left = [t for t in group if t.stream is None]
        for t in left:
            t.stream = lane
        if left:
            issues.warn("", f"{len(left)} {kind} task(s) could not be placed on a hardware stream "
                        f"({'no trace_view.json' if trace is None else 'no matching lane in trace_view.json'}); "
                        f"shown on lane {lane!r}", kind=f"unplaced {kind}")
            said[kind] += f"; {len(left)} on lane {lane!r}"
    return said


def _place_compute(rows: list[Task], hw: list[Span]) -> str:
    at: dict[int, list[Span]] = defaultdict(list)
    for s in hw:
        at[s.start_ns].append(s)
    for t in rows:
        cands = at.get(t.start_ns, [])
        named = [s for s in cands if s.name == t.name]
        pick = named[0] if named else (cands[0] if len(cands) == 1 else None)
        if pick is not None:
            t.stream = pick.lane
    return "trace_view.json Ascend Hardware lanes (matched by start time and name)"


def _place_comm(ops: list[Task], trace: TraceView | None, tasks: list[Task]) -> str:
    if trace is None:
        return "none (no trace_view.json)"
    hw = sorted(trace.hardware, key=lambda s: s.start_ns)
    starts = [s.start_ns for s in hw]
    compute_at = _compute_in_windows(tasks, ops)
    planes = sorted((s for s in trace.plane_tasks if "stream id" in s.args), key=lambda s: s.start_ns)
    plane_starts = [s.start_ns for s in planes]
    used: Counter[str] = Counter()
    for t in ops:
        inside = hw[bisect.bisect_left(starts, t.start_ns):bisect.bisect_left(starts, t.end_ns + 1)]
        named = [s.lane for s in inside if s.name == t.name]
        if named:
            t.stream, how = named[0], "by name"
        else:
            plane = planes[bisect.bisect_left(plane_starts, t.start_ns):bisect.bisect_left(plane_starts, t.end_ns)]
            votes = Counter(str(s.args["stream id"]) for s in plane)
            if votes:
                t.stream, how = votes.most_common(1)[0][0], "by Plane tasks' stream id"
            else:
                busy: Counter[str] = Counter()
                for s in inside:
                    if (s.start_ns, s.name) not in compute_at and not EVENT_TASK.match(s.name):
                        busy[s.lane] += min(s.end_ns, t.end_ns) - s.start_ns
                if not busy:
                    continue
                t.stream, how = busy.most_common(1)[0][0], "by the tasks inside the op's time window"
        used[how] += 1
    if not used:
        return "none (no matching lane in trace_view.json)"
    return "trace_view.json hardware lanes (" + ", ".join(f"{n} {how}" for how, n in used.items()) + ")"


def _compute_in_windows(tasks: list[Task], ops: list[Task]) -> set[tuple[int, str]]:
    """(start, name) of the compute tasks that start inside some op's window: the only ones the placement
    asks about (a set over every task of a long profile would cost a hundred bytes per task)."""
    windows = sorted((t.start_ns, t.end_ns) for t in ops)
    starts, reach, furthest = [a for a, _ in windows], [], -1
    for _, b in windows:
        furthest = max(furthest, b)
        reach.append(furthest)  # the latest end of the windows that start at or before this one

    def inside(x: int) -> bool:
        k = bisect.bisect_right(starts, x) - 1
        return k >= 0 and x <= reach[k]
    return {(t.start_ns, t.name) for t in tasks if not t.comm and inside(t.start_ns)}


def markers_from_trace(trace: TraceView | None, tasks: list[Task]) -> list[Task]:
    """The trace's event record/wait tasks not already among ``tasks`` (step unknown yet)."""
    if trace is None:
        return []
    have = {(t.stream, t.start_ns, t.name) for t in tasks}
    out = []
    for s in trace.hardware:
        kind = EVENT_TASK.match(s.name) or EVENT_TASK.match(str(s.args.get("Task Type", "")))
        if kind and (s.lane, s.start_ns, s.name) not in have:
            out.append(Task(s.name, f"EVENT_{kind.group(1).upper()}", s.lane, s.start_ns, s.dur_ns,
                            where=trace.path.name))
    return out

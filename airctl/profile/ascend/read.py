"""One rank's folder → :class:`RankData`: which file supplies the tasks, their streams and steps.

Tasks, first source with rows wins: ``kernel_details.csv`` (text export, every level), the ``.db``
export (``ascend_pytorch_profiler*.db``), ``trace_view.json`` (its hardware lanes and HCCL ops;
else its outermost ``aten::`` ops per thread, for CPU-only traces). Streams the table lacks come
from the trace (:mod:`.placement`). Steps: ``Step Id`` (or the step whose launches the db
records); a task without one takes the step of the last task before it. The profiler's own
breakdown: ``step_trace_time.csv``, else ``analysis.db``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from pathlib import Path

from airctl.profile.ascend import db, kernels, step_trace, trace
from airctl.profile.ascend.folders import RankFolder, json_object, level_of
from airctl.profile.ascend.kernels import op_type_of
from airctl.profile.ascend.model import COMPUTE_TYPE, EVENT_TASK, Columns, Issues, ProfileReadError, RankData, Task
from airctl.profile.ascend.placement import markers_from_trace, place_streams

HOST = re.compile(r"^(.*)_\d+_\d{14,17}_ascend_pt$")


def read_rank(folder: RankFolder, progress: Callable[[str], None] | None = None) -> RankData:
    issues = Issues()
    out = folder.output
    trace_path, kernels_path = out / trace.FILE, out / kernels.FILE
    dbs = sorted(p for p in out.glob("ascend_pytorch_profiler*.db") if p.is_file())  # a FIFO: SQLite would hang
    if not (trace_path.is_file() or kernels_path.is_file() or dbs):
        raise ProfileReadError(f"neither {trace.FILE} nor {kernels.FILE} (nor a .db export) in {out.name}",
                               file=str(out), hint="the profiler did not finish parsing; on an NPU, parse it offline "
                                                   "with torch_npu.profiler.profiler.analyse(<folder>)")
    view = trace.read_trace(trace_path, issues, progress) if trace_path.is_file() else None
    tasks: list[Task] = []
    columns: list[Columns] = []
    host_steps = dict(view.host_steps) if view else {}
    source = given = ""
    if kernels_path.is_file():
        tasks, cols = kernels.read_kernels(kernels_path, issues, view.thread_names if view else None)
        columns.append(cols)
        source, given = kernels.FILE, f"{kernels.FILE} Stream ID"
    if not tasks and dbs:
        tasks, db_steps, cols = db.read_db(dbs[-1], issues)
        columns.append(cols)
        source, given, host_steps = dbs[-1].name, f"{dbs[-1].name} TASK.streamId", host_steps or db_steps
    if not tasks and view is not None:
        tasks, source = tasks_from_trace(view), trace.FILE
        given = f"{trace.FILE} Ascend Hardware lanes" if view.hardware else f"{trace.FILE} host threads"
    if not tasks:
        raise ProfileReadError("no device tasks in this profiler folder", file=str(out),
                               hint="profile with activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]; "
                                    "the warnings above say which rows were left out")
    streams_from = place_streams(tasks, view, issues, given)
    if source != trace.FILE:
        tasks += markers_from_trace(view, tasks)
    launched = _attach_launches(tasks, view.launches) if view is not None and view.launches else \
        sum(t.launch_ns is not None for t in tasks)
    if view is not None:  # the trace's spans are in the tasks now: a long profile must not hold both
        view.hardware, view.comm_ops, view.plane_tasks, view.cpu_ops = [], [], [], []
    assign_steps(tasks, host_steps)
    data = RankData(folder.path, folder.rank, tasks, source, streams_from, host_steps, columns=columns,
                    level=level_of(folder.info), device=view.device if view else None,
                    host=(m.group(1) if (m := HOST.match(folder.path.name)) else None),
                    simulated=_simulated(folder))
    data.launches = launched
    _profiler_steps(data, out, issues)
    data.warnings = issues.finish()
    return data


def _attach_launches(tasks: list[Task], launches: dict[tuple[str, int], int]) -> int:
    """Each task's host launch, by its stream and start (both files write the same µs); how many found."""
    found = 0
    for t in tasks:
        if t.stream is not None and t.launch_ns is None:
            t.launch_ns = launches.get((t.stream, t.start_ns))
        found += t.launch_ns is not None
    launches.clear()
    return found


def tasks_from_trace(view: trace.TraceView) -> list[Task]:
    """Compute tasks and event record/wait of the hardware lanes, HCCL ops of the Communication
    process (their own tasks on the lanes are covered by the op); else the CPU ``aten::`` ops."""
    comm_where = f"{view.path.name}: Communication"
    out = [Task(s.name, op_type_of(s.name, True), None, s.start_ns, s.dur_ns, comm=True, core="COMMUNICATION",
                where=comm_where) for s in view.comm_ops]
    wheres: dict[str, str] = {}  # one "where" text per lane, shared by its tasks
    for s in view.hardware:
        kind = str(s.args.get("Task Type", ""))
        event = EVENT_TASK.match(s.name) or EVENT_TASK.match(kind)
        if event:
            out.append(Task(s.name, f"EVENT_{event.group(1).upper()}", s.lane, s.start_ns, s.dur_ns))
        elif not kind or COMPUTE_TYPE.search(kind):
            where = wheres.get(s.lane) or wheres.setdefault(s.lane, f"{view.path.name}: Stream {s.lane}")
            out.append(Task(s.name, s.name, s.lane, s.start_ns, s.dur_ns, core=kind, where=where))
    if out:
        return out
    return [Task(s.name, s.name.split("::")[-1], s.lane, s.start_ns, s.dur_ns) for s in view.cpu_ops]


def assign_steps(tasks: list[Task], host_steps: dict[int, tuple[int, int]]) -> None:
    """Tasks without a step take the step of the last stepped task that started before them (device
    work lags the host); without any, the last ``ProfilerStep`` that began before them; else 0."""
    stepped = sorted((t.start_ns, t.step) for t in tasks if t.step is not None)
    host = sorted((a, s) for s, (a, _b) in host_steps.items())
    for t in tasks:
        if t.step is not None:
            continue
        ref = stepped if stepped else host
        if not ref:
            t.step = 0
            continue
        i = bisect.bisect_right(ref, (t.start_ns, float("inf"))) - 1
        t.step = ref[max(i, 0)][1]


def _profiler_steps(data: RankData, out: Path, issues: Issues) -> None:
    csv_path, analysis = out / step_trace.FILE, out / "analysis.db"
    if csv_path.is_file():
        data.profiler_steps, cols = step_trace.read_step_trace(csv_path, issues)
        data.columns.append(cols)
        data.profiler_steps_from = step_trace.FILE
    elif analysis.is_file():
        data.profiler_steps = db.read_analysis_db(analysis, issues)
        data.profiler_steps_from = "analysis.db StepTraceTime"


def _simulated(folder: RankFolder) -> bool:
    if folder.info.get("simulated"):
        return True
    return bool((json_object(folder.path / "profiler_metadata.json") or {}).get("simulated"))

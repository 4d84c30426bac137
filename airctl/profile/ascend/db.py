"""The ``.db`` export (``export_type=[ExportType.Db]``): ``ascend_pytorch_profiler[_N].db`` and
``analysis.db``, read with sqlite3 (read-only).

Tables used (docs/profile.md §The .db export): ``TASK`` (every device task: ``startNs``, ``endNs``
integer ns, ``streamId``, ``connectionId``, ``globalTaskId``, ``taskType``), ``COMPUTE_TASK_INFO``
(``name``, ``opType``, ``taskType`` of compute tasks, joined on ``globalTaskId``), ``STRING_IDS``
(the text behind every interned id), ``COMMUNICATION_OP`` (one row per HCCL op: ``opName``,
``startNs``, ``endNs``, ``opType``, ``connectionId``, ``opId``), ``COMMUNICATION_TASK_INFO`` (the
ops' tasks: ``opId``, ``globalTaskId`` → their stream), ``STEP_TIME`` and ``CANN_API`` (steps: a
task belongs to the ``ProfilerStep`` during which its launch was called), and ``analysis.db``
``StepTraceTime`` (the profiler's per-step breakdown, µs). Times stored as TEXT are converted.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

from airctl.profile.ascend.model import EVENT_TASK, Columns, Issues, ProfileReadError, ProfilerStepRow, Task
from airctl.profile.ascend.step_trace import METRICS
from airctl.profile.ascend.times import TimeValueError, us_to_ns
from airctl.safe_files import check_regular

NEEDED = {
    "TASK": ("startNs", "endNs", "streamId", "globalTaskId", "connectionId", "taskType"),
    "COMPUTE_TASK_INFO": ("globalTaskId", "name", "opType", "taskType"),
    "STRING_IDS": ("id", "value"),
    "COMMUNICATION_OP": ("opName", "startNs", "endNs", "opType", "connectionId", "opId"),
    "COMMUNICATION_TASK_INFO": ("globalTaskId", "opId"),
    "STEP_TIME": ("id", "startNs", "endNs"),
    "CANN_API": ("startNs", "connectionId"),
}
REQUIRED = ("TASK", "COMPUTE_TASK_INFO", "STRING_IDS")
STEP_COLUMNS = ("computing", "communication_not_overlapped", "overlapped", "communication", "free", "stage", "bubble",
                "communication_not_overlapped_and_exclude_receive", "preparing")


def _connect(path: Path) -> sqlite3.Connection:
    # SQLite opens the path itself, retrying across signals: a FIFO there would hang past Ctrl-C
    check_regular(path, error=ProfileReadError, hint="a profiler writes its .db exports as files")
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        con.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.Error as e:
        raise ProfileReadError(f"{path.name} is not a readable SQLite database: {e}", file=str(path),
                               hint="the .db export may be incomplete; profile again") from e
    return con


def _columns(con: sqlite3.Connection, path: Path) -> tuple[dict[str, set[str]], Columns]:
    have = {row[0]: {c[1] for c in con.execute(f'PRAGMA table_info("{row[0]}")')}
            for row in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    report = Columns(path.name)
    for table, cols in NEEDED.items():
        for c in cols:
            (report.read if c in have.get(table, ()) else report.missing).append(f"{table}.{c}")
    report.ignored = [t for t in have if t not in NEEDED]
    return have, report


def read_db(path: Path, issues: Issues) -> tuple[list[Task], dict[int, tuple[int, int]], Columns]:
    """Tasks (compute, communication, event record/wait), host step windows, and the columns read."""
    with closing(_connect(path)) as con:
        have, report = _columns(con, path)
        lacking = [t for t in REQUIRED if not set(NEEDED[t]) <= have.get(t, set())]
        if lacking:
            raise ProfileReadError(f"{path.name} lacks the table(s)/column(s) needed: {', '.join(lacking)}",
                                   file=str(path), hint="expected torch_npu's ascend_pytorch_profiler*.db")
        try:
            return _read(con, have, path, issues) + (report,)
        except sqlite3.Error as e:
            raise ProfileReadError(f"{path.name}: {e}", file=str(path)) from e


def _full(have: dict[str, set[str]], table: str) -> bool:
    return set(NEEDED[table]) <= have.get(table, set())


def _read(con: sqlite3.Connection, have: dict[str, set[str]], path: Path, issues: Issues) -> tuple[
        list[Task], dict[int, tuple[int, int]]]:
    text = dict(con.execute("SELECT id, value FROM STRING_IDS").fetchall())
    steps = {int(i): (_ns(a), _ns(b)) for i, a, b in con.execute("SELECT id, startNs, endNs FROM STEP_TIME")
             } if _full(have, "STEP_TIME") else {}
    launch = dict(con.execute("SELECT connectionId, MAX(startNs) FROM CANN_API GROUP BY connectionId")
                  ) if _full(have, "CANN_API") else {}  # the innermost call of a connection: the launch itself

    def step_of(connection: Any) -> int | None:
        at = launch.get(connection)
        return next((s for s, (a, b) in steps.items() if at is not None and a <= _ns(at) < b), None)

    tasks: list[Task] = []
    compute_ids = set()
    blocks = "c.blockDim, c.mixBlockDim" if {"blockDim", "mixBlockDim"} <= have.get("COMPUTE_TASK_INFO", set()) \
        else "NULL, NULL"
    for gid, start, end, stream, conn, name, op_type, core, block, mix in con.execute(
            "SELECT t.globalTaskId, t.startNs, t.endNs, t.streamId, t.connectionId, c.name, c.opType, c.taskType, "
            f"{blocks} FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId"):
        compute_ids.add(gid)
        label, typ = str(text.get(name, name)), str(text.get(op_type, op_type) or "")
        at = launch.get(conn)
        _add(tasks, Task(label, typ if typ not in ("", "N/A", "None") else label, str(stream), _ns(start),
                         _ns(end) - _ns(start), step_of(conn), core=str(text.get(core, core)),
                         where=f"{path.name}: TASK {gid}", launch_ns=_ns(at) if at is not None else None,
                         blocks=(int(block), int(mix or 0)) if isinstance(block, int) else None), issues)
    if _full(have, "COMMUNICATION_OP"):
        stream_of: dict[Any, Counter[str]] = {}
        if _full(have, "COMMUNICATION_TASK_INFO"):
            for op_id, stream in con.execute("SELECT i.opId, t.streamId FROM COMMUNICATION_TASK_INFO i JOIN TASK t "
                                             "ON t.globalTaskId = i.globalTaskId"):
                stream_of.setdefault(op_id, Counter())[str(stream)] += 1
        for name, start, end, op_type, conn, op_id in con.execute(
                "SELECT opName, startNs, endNs, opType, connectionId, opId FROM COMMUNICATION_OP"):
            votes = stream_of.get(op_id)
            _add(tasks, Task(str(text.get(name, name)), str(text.get(op_type, op_type)),
                             votes.most_common(1)[0][0] if votes else None, _ns(start), _ns(end) - _ns(start),
                             step_of(conn), comm=True, core="COMMUNICATION", where=f"{path.name}: COMMUNICATION_OP"),
                 issues)
    for gid, start, end, stream, conn, kind in con.execute(
            "SELECT globalTaskId, startNs, endNs, streamId, connectionId, taskType FROM TASK"):
        label = str(text.get(kind, kind))
        event = EVENT_TASK.match(label)
        if event and gid not in compute_ids:
            _add(tasks, Task(label, f"EVENT_{event.group(1).upper()}", str(stream), _ns(start), _ns(end) - _ns(start),
                             step_of(conn), where=f"{path.name}: TASK {gid}"), issues)
    return tasks, steps


def _add(tasks: list[Task], task: Task, issues: Issues) -> None:
    if task.start_ns < 0 or task.dur_ns < 0:
        issues.warn(task.where, f"task {task.name!r} left out: negative time", kind="implausible db time")
    else:
        tasks.append(task)


def _ns(value: Any) -> int:
    """An ns column as stored: INTEGER, or TEXT (PYTORCH_API-style), or REAL."""
    if isinstance(value, int):
        return value
    try:
        return us_to_ns(value) // 1000
    except TimeValueError:
        return -1


def read_analysis_db(path: Path, issues: Issues) -> list[ProfilerStepRow]:
    """``analysis.db`` StepTraceTime, with the column names of step_trace_time.csv."""
    with closing(_connect(path)) as con:
        have, _ = _columns(con, path)
        cols = [c for c in STEP_COLUMNS if c in have.get("StepTraceTime", set())]
        if not cols:
            issues.warn(str(path), "has no StepTraceTime table; the step breakdown is not checked")
            return []
        out = []
        device = "deviceId" if "deviceId" in have.get("StepTraceTime", set()) else "NULL"  # older exports lack it
        for row in con.execute(f"SELECT {device}, step, {', '.join(cols)} FROM StepTraceTime"):
            try:
                values = {METRICS[STEP_COLUMNS.index(c)]: float(v) for c, v in zip(cols, row[2:], strict=True)
                          if v is not None}
            except (TypeError, ValueError) as e:  # a TEXT or BLOB cell where the profiler writes numbers
                raise ProfileReadError(f"StepTraceTime of step {row[1]!r} holds a value that is no number ({e})",
                                       file=str(path), hint="the .db export is damaged or not a profiler's; "
                                                            "profile again") from e
            step = str(row[1]).strip() if row[1] is not None else ""
            out.append(ProfilerStepRow(int(step) if step.isdigit() else None, row[0], values,
                                       f"{path.name}: StepTraceTime"))
        return out

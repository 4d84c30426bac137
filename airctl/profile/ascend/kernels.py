"""``kernel_details.csv``: one row per device kernel or communication op, at every export level.

Columns by torch_npu version (docs/profile.md §Columns): Level1/Level2 write every op_summary
column (``Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start
Time(us),Duration(us),Wait Time(us),Block Num,…`` then shapes and PMU counters); Level0 writes the
trimmed set ``Step Id,Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait
Time(us),Block Num|Block Dim,…`` — **no Stream ID**, and ``Type`` is often ``N/A``. ``Step Id`` is
there only when the profiler recorded steps; ``Device_id`` since torch_npu 2.6. CANN's own
``op_summary_*.csv`` (``Op Name``, ``OP Type``, ``Task Type``, ``Task Start Time(us)``, …) reads the
same way. Communication rows (``Accelerator Core`` ``COMMUNICATION``, older ``HCCL``) carry
``Stream ID`` ``N/A``: :mod:`.placement` puts them on their hardware stream.

A row whose time is NaN/N/A, negative, longer than a day or a day away from the others is left
out with a warning naming its line; a time that is not a number at all is an error.
"""

from __future__ import annotations

import re
from pathlib import Path

from airctl.profile.ascend.model import Columns, Issues, ProfileReadError, Task
from airctl.profile.ascend.table import columns, read_table
from airctl.profile.ascend.times import DAY_NS, MISSING, TimeValueError, implausible_starts, us_to_ns

FILE = "kernel_details.csv"
WANTED = {
    "name": ("Name", "Op Name"),
    "start": ("Start Time(us)", "Task Start Time(us)"),
    "dur": ("Duration(us)", "Task Duration(us)"),
    "stream": ("Stream ID", "Stream Id"),
    "step": ("Step Id",),
    "type": ("Type", "OP Type"),
    "core": ("Accelerator Core", "Task Type"),
    "device": ("Device_id",),
    "thread": ("Thread Id", "Thread ID"),  # airctl's sim: one lane per host thread
    "block": ("Block Dim", "Block Num"),  # cores of the kernel's own kind
    "mix": ("Mix Block Dim", "Mix Block Num"),  # a mixed kernel's cores of the other kind
}
REQUIRED = ("name", "start", "dur")
USEFUL = ("stream", "step", "type", "core")
COMM_CORES = ("COMMUNICATION", "HCCL")
COUNTERS = re.compile(r"(_\d+)+$")  # hcom_allReduce__868_0_1: op type hcom_allReduce_, then counters


def read_kernels(path: Path, issues: Issues, thread_names: dict[str, str] | None = None) -> tuple[
        list[Task], Columns]:
    """The tasks of ``kernel_details.csv`` (times exact, in ns) and which columns were read."""
    table = read_table(path, issues)
    col, report = columns(table, WANTED, USEFUL)
    absent = [WANTED[k][0] for k in REQUIRED if col[k] is None]
    if absent:
        raise ProfileReadError(f"{path.name} lacks the column(s) {', '.join(absent)}; it has: "
                               f"{', '.join(table.header) or 'no header'}", file=str(path), line=1,
                               hint="expected torch_npu's kernel_details.csv (Name, Type, Start Time(us), "
                                    "Duration(us), Step Id, ...)")
    if not table.rows:
        issues.warn(f"{path}:1", "has a header and no rows (torch_npu writes no empty tables: the export was cut "
                    "short or the file edited)")
    lanes = thread_names or {}
    tasks: list[Task] = []
    for line, cells in table.rows:
        where = f"{path}:{line}"
        try:
            start, dur = us_to_ns(table.cell(cells, col["start"])), us_to_ns(table.cell(cells, col["dur"]))
        except TimeValueError as e:
            if e.kind == "text":
                raise ProfileReadError(f"Start Time(us) or Duration(us) is not a number: {e.value!r}", file=str(path),
                                       line=line, hint="kernel_details.csv should be the profiler's own output, "
                                                       "unedited") from None
            issues.warn(where, f"row left out: its time is {'missing' if e.kind == 'missing' else 'NaN'}",
                        kind="time is NaN or missing")
            continue
        if dur < 0 or dur > DAY_NS:
            issues.warn(where, f"row left out: duration {dur / 1000} µs is {'negative' if dur < 0 else 'over a day'}",
                        kind="implausible duration")
            continue
        name = table.cell(cells, col["name"])
        typ = table.cell(cells, col["type"])
        core = table.cell(cells, col["core"])
        comm = core.upper() in COMM_CORES if col["core"] else name.startswith("hcom_")
        stream = _stream(table.cell(cells, col["stream"]), table.cell(cells, col["thread"]), lanes)
        tasks.append(Task(name, typ if typ not in MISSING else op_type_of(name, comm), stream, start, dur,
                          _step(table.cell(cells, col["step"]), where, issues), comm=comm, core=core, where=where,
                          blocks=_blocks(table.cell(cells, col["block"]), table.cell(cells, col["mix"]))))
    odd = implausible_starts([t.start_ns for t in tasks])
    for i in sorted(odd):
        issues.warn(tasks[i].where, f"row left out: start {tasks[i].start_ns / 1000} µs is not near the other rows' "
                    "(more than a day away, negative or absurd)", kind="implausible start time")
    return [t for i, t in enumerate(tasks) if i not in odd], report


def _blocks(block: str, mix: str) -> tuple[int, int] | None:
    """(Block Dim, Mix Block Dim) when the table gives a count of cores (blank or odd text: None)."""
    if not block.isdigit():
        return None
    return int(block), int(mix) if mix.isdigit() else 0


def op_type_of(name: str, comm: bool) -> str:
    """The op type when the table says N/A (Level0): the name, less the op counters of an HCCL op.

    >>> op_type_of("hcom_allReduce__873_0_1", True), op_type_of("aclnnAdd_AddAiCore_Add", False)
    ('hcom_allReduce_', 'aclnnAdd_AddAiCore_Add')
    """
    return COUNTERS.sub("", name) or name if comm else name


def _stream(stream: str, thread: str, lanes: dict[str, str]) -> str | None:
    if stream and stream not in MISSING:
        return stream[:-2] if stream.endswith(".0") else stream
    if thread and thread not in MISSING:
        return lanes.get(thread, f"thread {thread}")
    return None


def _step(text: str, where: str, issues: Issues) -> int | None:
    if not text or text in MISSING:
        return None
    try:
        return int(float(text))
    except ValueError:
        issues.warn(where, f"Step Id {text!r} is not a number; the row's step is taken from its time",
                    kind="bad Step Id")
        return None

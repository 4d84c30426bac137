"""``step_trace_time.csv``: the profiler's own per-step breakdown, to check ours against.

Header (torch_npu ≥ 2.6; earlier without ``Device_id``; ``Preparing`` since 2.7)::

    Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,
    Communication(Not Overlapped and Exclude Receive),Preparing

Values are µs (Python float text, ``0`` when nothing was added); ``Step`` is empty when no
``ProfilerStep`` was recorded (then there is one row per device). Their definitions are in
docs/profile.md §Step breakdown.
"""

from __future__ import annotations

from pathlib import Path

from airctl.profile.ascend.model import Columns, Issues, ProfilerStepRow
from airctl.profile.ascend.table import columns, read_table
from airctl.profile.ascend.times import MISSING, TimeValueError, us_to_ns

FILE = "step_trace_time.csv"
METRICS = ("Computing", "Communication(Not Overlapped)", "Overlapped", "Communication", "Free", "Stage", "Bubble",
           "Communication(Not Overlapped and Exclude Receive)", "Preparing")
WANTED: dict[str, tuple[str, ...]] = {"step": ("Step",), "device": ("Device_id",), **{m: (m,) for m in METRICS}}


def read_step_trace(path: Path, issues: Issues) -> tuple[list[ProfilerStepRow], Columns]:
    table = read_table(path, issues)
    col, report = columns(table, WANTED, ("step", "Computing", "Communication", "Overlapped", "Free"))
    out = []
    for line, cells in table.rows:
        where = f"{path}:{line}"
        values: dict[str, float] = {}
        for metric in METRICS:
            text = table.cell(cells, col[metric])
            if col[metric] is None or text in MISSING:
                continue
            try:
                values[metric] = us_to_ns(text) / 1000
            except TimeValueError:
                issues.warn(where, f"{metric} {text!r} is not a number; not compared", kind="bad step_trace_time value")
        out.append(ProfilerStepRow(_int(table.cell(cells, col["step"])), _int(table.cell(cells, col["device"])),
                                   values, where))
    return out, report


def _int(text: str) -> int | None:
    try:
        return int(float(text)) if text and text not in MISSING else None
    except ValueError:
        return None

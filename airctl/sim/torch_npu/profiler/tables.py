"""The CSV tables of ``ASCEND_PROFILER_OUTPUT``, with the columns torch_npu writes.

``kernel_details.csv`` (one row per kernel, with its step and stream), ``op_statistic.csv`` (per
op type: count and times) and ``step_trace_time.csv`` (per step: computing time). Kept apart from
the folder writer so the tables' columns sit in one place; ``airctl profile analyze`` reads them
back (:mod:`airctl.profile.analyze`).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airctl.sim.torch_npu.profiler.kernels import Span

CORE = "CPU(sim)"  # the "Accelerator Core" / "Core Type" of every row


def write_kernel_details(path: Path, kernels: list[Span], streams: list[str], step_of: Callable[[Span], int]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Step Id", "Name", "Type", "Accelerator Core", "Start Time(us)", "Duration(us)",
                    "Wait Time(us)", "Block Num", "Stream ID", "Thread Id"])
        previous_end: dict[Any, float] = {}
        for e, stream in zip(kernels, streams, strict=True):
            wait = max(0.0, e.start - previous_end.get(stream, e.start))
            previous_end[stream] = e.end
            w.writerow([step_of(e), e.name, e.name.split("::")[-1], CORE, f"{e.start:.3f}", f"{e.dur:.3f}",
                        f"{wait:.3f}", "0", stream, e.tid])


def write_op_statistic(path: Path, kernels: list[Span]) -> None:
    stats: dict[str, list[float]] = defaultdict(list)
    for e in kernels:
        stats[e.name.split("::")[-1]].append(e.dur)
    total = sum(sum(v) for v in stats.values()) or 1.0
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)",
                    "Max Time(us)", "Ratio(%)"])
        for op, times in sorted(stats.items(), key=lambda kv: -sum(kv[1])):
            w.writerow([op, CORE, len(times), f"{sum(times):.3f}", f"{min(times):.3f}",
                        f"{sum(times) / len(times):.3f}", f"{max(times):.3f}", f"{100 * sum(times) / total:.2f}"])


def write_step_trace_time(path: Path, kernels: list[Span], step_of: Callable[[Span], int], default_step: int) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Step", "Computing", "Communication(Not Overlapped)", "Overlapped", "Communication",
                    "Free", "Stage", "Bubble", "Communication(Not Overlapped and Exclude Receive)"])
        by_step: dict[int, float] = defaultdict(float)
        for e in kernels:
            by_step[step_of(e)] += e.dur
        for step in sorted(by_step) or [default_step]:
            w.writerow([step, f"{by_step.get(step, 0.0):.3f}", "0", "0", "0", "0", "0", "0", "0"])

"""``torch_npu.profiler`` under sim: records with ``torch.profiler`` on the CPU and writes
the Ascend output layout (reference/torchair.md §7):

    <dir>/<host>_<pid>_<YYYYmmddHHMMSSmmm>_ascend_pt/
        ASCEND_PROFILER_OUTPUT/trace_view.json      Chrome trace (Perfetto, chrome://tracing)
        ASCEND_PROFILER_OUTPUT/kernel_details.csv   one row per op (Name, Type, ..., Step Id)
        ASCEND_PROFILER_OUTPUT/op_statistic.csv     per op type: count and total time
        ASCEND_PROFILER_OUTPUT/step_trace_time.csv  per step: computing time
        profiler_info.json, profiler_metadata.json

Times are CPU times: the layout is the NPU's, the numbers are what the CPU measured.
"""

from __future__ import annotations

import csv
import enum
import json
import os
import socket
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.profiler as _tp


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    NPU = "NPU"


class ProfilerLevel:
    Level_none = "Level_none"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class AiCMetrics:
    PipeUtilization = "PipeUtilization"
    ArithmeticUtilization = "ArithmeticUtilization"
    Memory = "Memory"
    MemoryL0 = "MemoryL0"
    MemoryUB = "MemoryUB"
    ResourceConflictRatio = "ResourceConflictRatio"
    L2Cache = "L2Cache"
    AiCoreNone = "AiCoreNone"


class ExportType:
    Db = "db"
    Text = "text"


class _ExperimentalConfig:
    def __init__(self, profiler_level: str = ProfilerLevel.Level0, aic_metrics: str = AiCMetrics.AiCoreNone,
                 l2_cache: bool = False, data_simplification: bool = True, record_op_args: bool = False,
                 export_type: Any = ExportType.Text, **kwargs: Any) -> None:
        self.profiler_level = profiler_level
        self.aic_metrics = aic_metrics
        self.l2_cache = l2_cache
        self.data_simplification = data_simplification
        self.export_type = export_type
        self.extra = kwargs


def schedule(*, wait: int, active: int, warmup: int = 0, repeat: int = 0, skip_first: int = 0):
    return _tp.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first)


def _timestamp() -> str:
    now = time.time()
    return time.strftime("%Y%m%d%H%M%S", time.localtime(now)) + f"{int(now * 1000) % 1000:03d}"


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, analyse_flag: bool = True,
                              async_mode: bool = False) -> Callable[[Any], None]:
    """Returns the on_trace_ready callback that writes one ``*_ascend_pt`` folder per trace."""

    def handler(prof: Any) -> None:
        write_ascend_layout(prof, Path(dir_name), worker_name)

    return handler


def write_ascend_layout(prof: Any, root: Path, worker_name: str | None = None) -> Path:
    name = worker_name or socket.gethostname()
    out = root / f"{name}_{os.getpid()}_{_timestamp()}_ascend_pt"
    result = out / "ASCEND_PROFILER_OUTPUT"
    result.mkdir(parents=True, exist_ok=True)
    trace_path = result / "trace_view.json"
    torch_prof = getattr(prof, "_torch_prof", prof)
    torch_prof.export_chrome_trace(str(trace_path))
    step = getattr(prof, "step_num", 0)
    rows = []
    for evt in torch_prof.events() or []:
        if getattr(evt, "device_type", None) is not None and str(evt.device_type).endswith("CPU") is False:
            continue
        rows.append(evt)
    with open(result / "kernel_details.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Step Id", "Name", "Type", "Accelerator Core", "Start Time(us)", "Duration(us)",
                    "Wait Time(us)", "Block Num", "Thread Id"])
        for evt in rows:
            w.writerow([step, evt.name, evt.name.split("::")[-1], "CPU(sim)",
                        f"{evt.time_range.start:.3f}", f"{evt.time_range.elapsed_us():.3f}", "0", "0",
                        getattr(evt, "thread", 0)])
    stats: dict[str, list[float]] = defaultdict(list)
    for evt in rows:
        stats[evt.name].append(evt.time_range.elapsed_us())
    with open(result / "op_statistic.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)",
                    "Max Time(us)", "Ratio(%)"])
        total = sum(sum(v) for v in stats.values()) or 1.0
        for op, times in sorted(stats.items(), key=lambda kv: -sum(kv[1])):
            w.writerow([op, "CPU(sim)", len(times), f"{sum(times):.3f}", f"{min(times):.3f}",
                        f"{sum(times) / len(times):.3f}", f"{max(times):.3f}", f"{100 * sum(times) / total:.2f}"])
    span = (max((e.time_range.end for e in rows), default=0) - min((e.time_range.start for e in rows), default=0))
    with open(result / "step_trace_time.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Step", "Computing", "Communication(Not Overlapped)", "Overlapped", "Communication",
                    "Free", "Stage", "Bubble", "Communication(Not Overlapped and Exclude Receive)"])
        w.writerow([step, f"{span:.3f}", "0", "0", "0", "0", "0", "0", "0"])
    (out / "profiler_info.json").write_text(json.dumps({"backend": "airctl-sim", "torch": torch.__version__,
                                                         "device": "cpu"}, indent=2))
    (out / "profiler_metadata.json").write_text(json.dumps({"simulated": True}, indent=2))
    return out


class profile:  # noqa: N801 - the real API's name
    """``torch_npu.profiler.profile`` recording CPU activity with ``torch.profiler``."""

    def __init__(self, activities=None, schedule=None, on_trace_ready=None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: _ExperimentalConfig | None = None,
                 use_cuda: bool | None = None, **_: Any) -> None:
        self.experimental_config = experimental_config or _ExperimentalConfig()
        self._on_trace_ready = on_trace_ready
        self._torch_prof = _tp.profile(
            activities=[_tp.ProfilerActivity.CPU],
            schedule=schedule,
            on_trace_ready=(lambda p: on_trace_ready(self)) if on_trace_ready else None,
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
            with_modules=with_modules,
        )
        self._stopped = False

    @property
    def step_num(self) -> int:
        return self._torch_prof.step_num

    def start(self) -> None:
        self._torch_prof.start()

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._torch_prof.stop()

    def step(self) -> None:
        # The docs call step() after the with-block; the real profiler tolerates that.
        if self._stopped:
            return
        self._torch_prof.step()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def export_chrome_trace(self, path: str) -> None:
        self._torch_prof.export_chrome_trace(path)

    def key_averages(self, *args: Any, **kwargs: Any):
        return self._torch_prof.key_averages(*args, **kwargs)

    def events(self):
        return self._torch_prof.events()


supported_activities = lambda: {ProfilerActivity.CPU, ProfilerActivity.NPU}  # noqa: E731

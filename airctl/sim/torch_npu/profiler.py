"""``torch_npu.profiler`` under sim: the same API, recording with ``torch.profiler`` on the CPU
and writing the Ascend output layout (reference/torchair.md §7, §10.2).

The public surface follows the torch_npu wheel (``torch_npu/profiler/__init__.py``):
``profile`` (keyword-only arguments), ``ProfilerActivity``, ``schedule`` (the ``Schedule``
class), ``ProfilerAction``, ``tensorboard_trace_handler``, ``_ExperimentalConfig``,
``ProfilerLevel``, ``AiCMetrics``, ``ExportType``, ``HostSystem`` and the ``supported_*``
helpers. The step/schedule state machine behaves as torch_npu's: a trace starts when the
schedule enters RECORD, is handed to ``on_trace_ready`` when a RECORD_AND_SAVE step ends or
the profiler stops, and ``prof.step()`` after the ``with`` block (as TorchAir's docs write it)
only warns — the trace was already saved by the stop.

One folder per saved trace::

    <dir>/<worker or host>_<pid>_<YYYYmmddHHMMSSmmm>_ascend_pt/    timestamp: when the trace started
        ASCEND_PROFILER_OUTPUT/trace_view.json      Chrome trace (Perfetto, chrome://tracing)
        ASCEND_PROFILER_OUTPUT/kernel_details.csv   one row per executed ATen op ("kernel")
        ASCEND_PROFILER_OUTPUT/op_statistic.csv     per op: count and time
        ASCEND_PROFILER_OUTPUT/step_trace_time.csv  per step: computing time
        profiler_info.json, profiler_metadata.json  what produced the folder (marked simulated)

Times are CPU times of the sim run: the layout is the NPU's, the numbers are what the CPU
measured. There are no CANN device tasks (``PROF_*`` folders) because nothing ran on a device.
"""

from __future__ import annotations

import bisect
import csv
import datetime as _dt
import enum
import json
import os
import shutil
import socket
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch.profiler as _tp

__all__ = ["profile", "ProfilerActivity", "supported_activities", "tensorboard_trace_handler", "schedule",
           "ProfilerAction", "_ExperimentalConfig", "supported_profiler_level", "supported_ai_core_metrics",
           "supported_export_type", "ProfilerLevel", "AiCMetrics", "ExportType", "HostSystem"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    NPU = 1


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class ProfilerLevel:
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"
    Level_none = "Level_none"


class AiCMetrics:
    PipeUtilization = "ACL_AICORE_PIPE_UTILIZATION"
    ArithmeticUtilization = "ACL_AICORE_ARITHMETIC_UTILIZATION"
    Memory = "ACL_AICORE_MEMORY_BANDWIDTH"
    MemoryL0 = "ACL_AICORE_L0B_AND_WIDTH"
    MemoryUB = "ACL_AICORE_MEMORY_UB"
    ResourceConflictRatio = "ACL_AICORE_RESOURCE_CONFLICT_RATIO"
    L2Cache = "ACL_AICORE_L2_CACHE"
    MemoryAccess = "ACL_AICORE_MEMORY_ACCESS"
    AiCoreNone = "ACL_AICORE_NONE"


class ExportType:
    Db = "db"
    Text = "text"


class HostSystem:
    CPU = "cpu"
    MEM = "mem"
    DISK = "disk"
    NETWORK = "network"
    OSRT = "osrt"
    NUMA = "numa"


def supported_activities() -> set[ProfilerActivity]:
    return {ProfilerActivity.CPU, ProfilerActivity.NPU}


def supported_profiler_level() -> set[str]:
    return {ProfilerLevel.Level0, ProfilerLevel.Level1, ProfilerLevel.Level2, ProfilerLevel.Level_none}


def supported_ai_core_metrics() -> set[str]:
    return {v for k, v in vars(AiCMetrics).items() if not k.startswith("_")}


def supported_export_type() -> set[str]:
    return {ExportType.Db, ExportType.Text}


class _ExperimentalConfig:
    """Accepted and kept (the folder's ``profiler_info.json`` records it); the CPU has no AI-core
    counters, L2 cache or msprof_tx data to collect, so these settings change nothing here."""

    def __init__(self, profiler_level: str = ProfilerLevel.Level0,
                 aic_metrics: str = AiCMetrics.PipeUtilization, l2_cache: bool = False, msprof_tx: bool = False,
                 mstx: bool = False, data_simplification: bool = True, record_op_args: bool = False,
                 op_attr: bool = False, gc_detect_threshold: float | None = None,
                 export_type: str | list[str] = ExportType.Text, host_sys: list[str] | None = None,
                 mstx_domain_include: list[str] | None = None, mstx_domain_exclude: list[str] | None = None,
                 sys_io: bool = False, sys_interconnection: bool = False) -> None:
        self.profiler_level = profiler_level
        self.aic_metrics = aic_metrics
        self.l2_cache = l2_cache
        self.msprof_tx = msprof_tx or mstx
        self.data_simplification = data_simplification
        self.record_op_args = record_op_args
        self.op_attr = op_attr
        self.gc_detect_threshold = gc_detect_threshold
        self.export_type = [export_type] if isinstance(export_type, str) else list(export_type)
        self.host_sys = list(host_sys or [])
        self.sys_io = sys_io
        self.sys_interconnection = sys_interconnection

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if isinstance(v, (str, bool, int, float, list, type(None)))}


class Schedule:
    """Which action each step gets: skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` warm-up and ``active`` recorded steps; the last active step of a cycle saves.
    ``repeat`` = 0 cycles forever. With ``skip_first_wait`` the first cycle has no wait.

    >>> s = Schedule(wait=0, warmup=0, active=1, repeat=1)
    >>> [s(i).name for i in range(3)]
    ['RECORD_AND_SAVE', 'NONE', 'NONE']
    """

    def __init__(self, wait: int, active: int, warmup: int = 0, repeat: int = 0, skip_first: int = 0,
                 skip_first_wait: int = 0) -> None:
        self.wait = _non_negative("wait", wait, 0)
        self.warmup = _non_negative("warmup", warmup, 0)
        self.active = active if isinstance(active, int) and active > 0 else _reset("active", 1)
        self.repeat = _non_negative("repeat", repeat, 0)
        self.skip_first = _non_negative("skip_first", skip_first, 0)
        self.skip_first_wait = skip_first_wait if isinstance(skip_first_wait, int) else _reset("skip_first_wait", 0)

    def __call__(self, step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"profiler step must be >= 0, got {step}")
        if step < self.skip_first:
            return ProfilerAction.NONE
        step -= self.skip_first
        if self.skip_first_wait:
            step += self.wait
        cycle = self.wait + self.warmup + self.active
        if self.repeat and step // cycle >= self.repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < self.wait:
            return ProfilerAction.NONE
        if pos < self.wait + self.warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if pos == cycle - 1 else ProfilerAction.RECORD


schedule = Schedule  # torch_npu exports the class under this name


def _reset(name: str, value: int) -> int:
    warnings.warn(f"torch_npu.profiler.schedule: invalid {name}, using {value}", stacklevel=3)
    return value


def _non_negative(name: str, value: Any, default: int) -> int:
    return value if isinstance(value, int) and value >= 0 else _reset(name, default)


def _always_record(_step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str | None = None, worker_name: str | None = None,
                              analyse_flag: bool = True, async_mode: bool = False) -> Callable[[Any], Path | None]:
    """The ``on_trace_ready`` callback that writes one ``*_ascend_pt`` folder per saved trace.
    ``dir_name`` None means ``$ASCEND_WORK_PATH/profiling_data`` when that is set, else the cwd."""
    if dir_name is None:
        work = os.environ.get("ASCEND_WORK_PATH")
        root = Path(work).absolute() / "profiling_data" if work else None
    else:
        root = Path(dir_name).absolute()

    def handler(prof: Any) -> Path | None:
        if not analyse_flag:
            return None
        return write_ascend_layout(prof, root or Path.cwd(), worker_name)

    return handler


class profile:  # noqa: N801 - the real API's name
    """``torch_npu.profiler.profile``: the step/schedule machine of torch_npu over ``torch.profiler``."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[..., Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: _ExperimentalConfig | None = None,
                 execution_trace_observer: Any = None, custom_trace_id_callback: Callable[[], str] | None = None,
                 use_cuda: bool | None = None) -> None:
        self.activities = set(activities) if activities else supported_activities()
        self.record_steps = callable(schedule)
        self.schedule = schedule if callable(schedule) else _always_record
        self.on_trace_ready = on_trace_ready if callable(on_trace_ready) else None
        self.experimental_config = experimental_config or _ExperimentalConfig()
        self._options = dict(record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack,
                             with_flops=with_flops, with_modules=with_modules)
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.stopped = False
        self.trace_started_at: _dt.datetime | None = None
        self.saved: list[Path] = []  # folders written by on_trace_ready, in order
        self._torch_prof: _tp.profile | None = None
        self._exported: tuple[Any, Path] | None = None  # (trace, file) once the trace was written
        self._recording = False
        self._step_range: Any = None
        self.trace_steps: list[int] = []  # step numbers recorded in the current trace, in order

    # -- the trace lifecycle (what each schedule transition does) ------------------------------
    def _init_trace(self) -> None:
        import torch.profiler as tp

        self._torch_prof = tp.profile(activities=[tp.ProfilerActivity.CPU], **self._options)
        self.trace_started_at = _dt.datetime.now().astimezone()
        self.trace_steps = []

    def _start_trace(self) -> None:
        if self._torch_prof is not None and not self._recording:
            self._torch_prof.start()
            self._recording = True

    def _stop_trace(self) -> None:
        if self._torch_prof is not None and self._recording:
            self._torch_prof.stop()
            self._recording = False

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None and self._torch_prof is not None:
            out = self.on_trace_ready(self)
            if isinstance(out, Path):
                self.saved.append(out)

    def _drop_trace(self) -> None:
        self._torch_prof = None

    def _transit(self, prev: ProfilerAction | None, current: ProfilerAction | None) -> None:
        A = ProfilerAction  # noqa: N806 - reads as the transition table
        save = [self._stop_trace, self._trace_ready]
        table: dict[tuple[Any, Any], list[Callable[[], None]]] = {
            (A.NONE, A.WARMUP): [self._init_trace],
            (A.NONE, A.RECORD): [self._init_trace, self._start_trace],
            (A.NONE, A.RECORD_AND_SAVE): [self._init_trace, self._start_trace],
            (A.WARMUP, A.NONE): [self._start_trace, self._stop_trace],
            (A.WARMUP, A.RECORD): [self._start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self._start_trace],
            (A.RECORD, A.NONE): [self._stop_trace],
            (A.RECORD, A.WARMUP): [self._stop_trace],
            (A.RECORD_AND_SAVE, A.NONE): save,
            (A.RECORD_AND_SAVE, A.WARMUP): save + [self._init_trace],
            (A.RECORD_AND_SAVE, A.RECORD): save + [self._init_trace, self._start_trace],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): save + [self._init_trace, self._start_trace],
            (A.WARMUP, None): [self._drop_trace],
            (A.RECORD, None): save,
            (A.RECORD_AND_SAVE, None): save,
        }
        if (prev, current) in {(A.WARMUP, A.NONE), (A.RECORD, A.NONE), (A.RECORD, A.WARMUP), (A.WARMUP, None)}:
            warnings.warn(f"torch_npu.profiler: schedule goes from {prev.name} to "
                          f"{current.name if current else 'stop'}; that trace is not saved", stacklevel=4)
        for action in table.get((prev, current), []):
            action()

    def _open_step_range(self) -> None:
        if self.record_steps:
            import torch

            self._step_range = torch.autograd.profiler.record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()
            if self._recording:
                self.trace_steps.append(self.step_num)

    def _close_step_range(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    # -- public API ------------------------------------------------------------------------------
    def start(self) -> None:
        self.stopped = False
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step_range()

    def stop(self) -> None:
        if self.stopped:
            return
        self._close_step_range()
        self._transit(self.current_action, None)
        self.stopped = True

    def step(self) -> None:
        if self.stopped:
            # TorchAir's docs call step() after the with-block: the stop already saved the trace.
            warnings.warn("torch_npu.profiler: step() after the profiler stopped has no effect", stacklevel=2)
            return
        self._close_step_range()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._open_step_range()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def export_chrome_trace(self, path: str) -> None:
        # torch can write a trace once; a second export copies the first file
        if self._exported is not None and self._exported[0] is self._torch_prof:
            shutil.copyfile(self._exported[1], path)
            return
        self._require_trace().export_chrome_trace(path)
        self._exported = (self._torch_prof, Path(path))

    def key_averages(self, *args: Any, **kwargs: Any) -> Any:
        return self._require_trace().key_averages(*args, **kwargs)

    def events(self) -> Any:
        return self._require_trace().events()

    def add_metadata(self, key: str, value: str) -> None:
        self._require_trace().add_metadata(key, value)

    def _require_trace(self) -> _tp.profile:
        if self._torch_prof is None:
            raise RuntimeError("torch_npu.profiler: no trace was recorded (check the schedule)")
        return self._torch_prof


_KinetoProfile = profile


# -- the Ascend output layout -------------------------------------------------------------------
def _folder_name(prof: Any, worker_name: str | None) -> str:
    started = getattr(prof, "trace_started_at", None) or _dt.datetime.now().astimezone()
    stamp = started.strftime("%Y%m%d%H%M%S%f")[:-3]
    return f"{worker_name or socket.gethostname()}_{os.getpid()}_{stamp}_ascend_pt"


@dataclass
class _Span:
    """One complete ("X") event of the exported Chrome trace; times in microseconds."""

    name: str
    cat: str
    tid: Any
    start: float
    dur: float

    @property
    def end(self) -> float:
        return self.start + self.dur


def _spans(doc: Any) -> list[_Span]:
    """The spans of the trace torch wrote. The layout is built from this file rather than from
    ``profile.events()``: with ``with_stack=True`` torch 2.13 intermittently returns corrupted
    event names from ``events()``, while the exported trace is sound."""
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    return [_Span(str(e.get("name", "")), str(e.get("cat", "")), e.get("tid", 0), float(e.get("ts", 0.0)),
                  float(e.get("dur", 0.0)))
            for e in events if isinstance(e, dict) and e.get("ph") == "X"]


def _step_ranges(spans: list[_Span], steps: list[int]) -> list[tuple[int, float, float]]:
    """(step, start, end) per ``ProfilerStep#N`` range, numbered as the profiler recorded them."""
    ranges = sorted((s for s in spans if s.name.startswith("ProfilerStep")), key=lambda s: s.start)
    out = []
    for i, s in enumerate(ranges):
        number = s.name.partition("#")[2]
        step = int(number) if number.isdigit() else (steps[i] if i < len(steps) else i)
        out.append((step, s.start, s.end))
    return out


def _kernels(spans: list[_Span]) -> list[_Span]:
    """ATen ops the program called (no ATen op encloses them on their thread): on an NPU each is
    a launched kernel; the ATen calls they make internally are host-side details of the CPU."""
    out: list[_Span] = []
    by_thread: dict[Any, list[_Span]] = defaultdict(list)
    for s in spans:
        if s.name.startswith("aten::"):
            by_thread[s.tid].append(s)
    for ops in by_thread.values():
        open_until = float("-inf")
        for s in sorted(ops, key=lambda s: (s.start, -s.dur)):
            if s.start >= open_until:
                out.append(s)
                open_until = s.end
    return sorted(out, key=lambda s: s.start)


def _streams_of(spans: list[_Span], kernels: list[_Span]) -> list[str]:
    """The stream each kernel ran on: the executor wraps every op it runs serially under the
    profiler in a ``record_function`` named ``airctl.stream::<stream>``; outside one: ``default``."""
    from airctl.execute.executor import STREAM_MARK

    marks: dict[Any, list[_Span]] = defaultdict(list)
    for s in spans:
        if s.name.startswith(STREAM_MARK):
            marks[s.tid].append(s)
    for lst in marks.values():
        lst.sort(key=lambda s: s.start)
    starts = {tid: [s.start for s in lst] for tid, lst in marks.items()}
    out = []
    for k in kernels:
        lst = marks.get(k.tid)
        name = "default"
        if lst:
            at = bisect.bisect_right(starts[k.tid], k.start) - 1
            if at >= 0 and lst[at].end >= k.end:
                name = lst[at].name[len(STREAM_MARK):]
        out.append(name)
    return out


def _add_stream_lanes(doc: Any, kernels: list[_Span], streams: list[str]) -> None:
    """Add the device view to the trace document: one lane per stream (``Stream <name>``) holding the
    kernels, as the NPU's task lanes do, next to torch's host-side lanes."""
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        return
    pid = "NPU (airctl sim)"
    lanes = {name: i for i, name in enumerate(dict.fromkeys(streams))}
    events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": pid}})
    for name, tid in lanes.items():
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"Stream {name}"}})
    for k, name in zip(kernels, streams, strict=True):
        events.append({"ph": "X", "cat": "kernel", "name": k.name.split("::")[-1], "pid": pid, "tid": lanes[name],
                       "ts": k.start, "dur": k.dur, "args": {"Stream Id": name}})


def write_ascend_layout(prof: profile, root: Path, worker_name: str | None = None) -> Path:
    """Write one saved trace of ``prof`` as ``<root>/<...>_ascend_pt``; returns the folder."""
    out = Path(root) / _folder_name(prof, worker_name)
    result = out / "ASCEND_PROFILER_OUTPUT"
    result.mkdir(parents=True, exist_ok=True)
    trace_file = result / "trace_view.json"
    prof.export_chrome_trace(str(trace_file))
    doc = json.loads(trace_file.read_text(encoding="utf-8"))
    spans = _spans(doc)
    steps = _step_ranges(spans, list(getattr(prof, "trace_steps", [])))
    default_step = steps[0][0] if steps else getattr(prof, "step_num", 0)

    def step_of(e: _Span) -> int:
        for step, start, end in steps:
            if start <= e.start <= end:
                return step
        return default_step

    kernels = _kernels(spans)
    streams = _streams_of(spans, kernels)
    _add_stream_lanes(doc, kernels, streams)
    trace_file.write_text(json.dumps(doc), encoding="utf-8")
    with open(result / "kernel_details.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Step Id", "Name", "Type", "Accelerator Core", "Start Time(us)", "Duration(us)",
                    "Wait Time(us)", "Block Num", "Stream ID", "Thread Id"])
        previous_end: dict[Any, float] = {}
        for e, stream in zip(kernels, streams, strict=True):
            wait = max(0.0, e.start - previous_end.get(stream, e.start))
            previous_end[stream] = e.end
            w.writerow([step_of(e), e.name, e.name.split("::")[-1], "CPU(sim)", f"{e.start:.3f}", f"{e.dur:.3f}",
                        f"{wait:.3f}", "0", stream, e.tid])
    stats: dict[str, list[float]] = defaultdict(list)
    for e in kernels:
        stats[e.name.split("::")[-1]].append(e.dur)
    total = sum(sum(v) for v in stats.values()) or 1.0
    with open(result / "op_statistic.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)",
                    "Max Time(us)", "Ratio(%)"])
        for op, times in sorted(stats.items(), key=lambda kv: -sum(kv[1])):
            w.writerow([op, "CPU(sim)", len(times), f"{sum(times):.3f}", f"{min(times):.3f}",
                        f"{sum(times) / len(times):.3f}", f"{max(times):.3f}", f"{100 * sum(times) / total:.2f}"])
    with open(result / "step_trace_time.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Step", "Computing", "Communication(Not Overlapped)", "Overlapped", "Communication",
                    "Free", "Stage", "Bubble", "Communication(Not Overlapped and Exclude Receive)"])
        by_step: dict[int, float] = defaultdict(float)
        for e in kernels:
            by_step[step_of(e)] += e.dur
        for step in sorted(by_step) or [default_step]:
            w.writerow([step, f"{by_step.get(step, 0.0):.3f}", "0", "0", "0", "0", "0", "0", "0"])
    import torch

    config = getattr(prof, "experimental_config", None)
    info = {
        "backend": "airctl sim (CPU)",
        "simulated": True,
        "torch": torch.__version__,
        "activities": sorted(a.name for a in getattr(prof, "activities", set())),
        "experimental_config": config.to_json() if hasattr(config, "to_json") else None,
    }
    (out / "profiler_info.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    (out / "profiler_metadata.json").write_text(json.dumps({"simulated": True}, indent=2), encoding="utf-8")
    return out

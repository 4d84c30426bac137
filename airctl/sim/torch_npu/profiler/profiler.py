"""``torch_npu.profiler.profile`` over ``torch.profiler``: torch_npu's step/schedule state machine.

The step/schedule state machine behaves as torch_npu's: a trace starts when the schedule enters
RECORD, is handed to ``on_trace_ready`` when a RECORD_AND_SAVE step ends or the profiler stops,
and ``prof.step()`` after the ``with`` block (as TorchAir's docs write it) only warns — the trace
was already saved by the stop. ``tensorboard_trace_handler`` is the ``on_trace_ready`` that
writes the Ascend folder (:mod:`.ascend_layout`).
"""

from __future__ import annotations

import datetime as _dt
import enum
import os
import shutil
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airctl.sim.torch_npu.profiler.ascend_layout import write_ascend_layout
from airctl.sim.torch_npu.profiler.experimental_config import _ExperimentalConfig
from airctl.sim.torch_npu.profiler.scheduler import ProfilerAction

if TYPE_CHECKING:
    import torch.profiler as _tp


class ProfilerActivity(enum.Enum):
    CPU = 0
    NPU = 1


def supported_activities() -> set[ProfilerActivity]:
    return {ProfilerActivity.CPU, ProfilerActivity.NPU}


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

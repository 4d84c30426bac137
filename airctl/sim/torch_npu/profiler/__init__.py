"""``torch_npu.profiler`` under sim: the same API, recording with ``torch.profiler`` on the CPU
and writing the Ascend output layout (reference/torchair.md §7, §10.2).

The package mirrors the torch_npu wheel's ``torch_npu/profiler/``, and this ``__init__`` exports
what the wheel's does: ``profile`` (keyword-only arguments), ``ProfilerActivity``, ``schedule``
(the ``Schedule`` class), ``ProfilerAction``, ``tensorboard_trace_handler``,
``_ExperimentalConfig``, ``ProfilerLevel``, ``AiCMetrics``, ``ExportType``, ``HostSystem`` and the
``supported_*`` helpers. ``airctl.sim.install`` registers it as ``sys.modules["torch_npu.profiler"]``.

- :mod:`.profiler`: ``profile``, its step/schedule state machine, ``tensorboard_trace_handler``;
- :mod:`.scheduler`: ``Schedule`` and ``ProfilerAction``;
- :mod:`.experimental_config`: ``_ExperimentalConfig`` and the level/metric/export names;
- :mod:`.ascend_layout`: one ``*_ascend_pt`` folder per saved trace;
- :mod:`.kernels`: the torch trace read back as spans, kernels, steps and streams;
- :mod:`.tables`: ``kernel_details.csv``, ``op_statistic.csv``, ``step_trace_time.csv``.

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

from airctl.sim.torch_npu.profiler.experimental_config import (
    AiCMetrics,
    ExportType,
    HostSystem,
    ProfilerLevel,
    _ExperimentalConfig,
    supported_ai_core_metrics,
    supported_export_type,
    supported_profiler_level,
)
from airctl.sim.torch_npu.profiler.profiler import (  # noqa: F401 - _KinetoProfile: exported as the wheel does
    ProfilerActivity,
    _KinetoProfile,
    profile,
    supported_activities,
    tensorboard_trace_handler,
)
from airctl.sim.torch_npu.profiler.scheduler import ProfilerAction, Schedule

schedule = Schedule  # torch_npu exports the class under this name

__all__ = ["profile", "ProfilerActivity", "supported_activities", "tensorboard_trace_handler", "schedule",
           "ProfilerAction", "_ExperimentalConfig", "supported_profiler_level", "supported_ai_core_metrics",
           "supported_export_type", "ProfilerLevel", "AiCMetrics", "ExportType", "HostSystem"]

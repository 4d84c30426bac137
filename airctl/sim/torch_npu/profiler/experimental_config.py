"""``_ExperimentalConfig`` and the names it takes, as torch_npu spells them.

Kept apart from the profiler's state machine because it is pure data: accepted, validated by
the ``supported_*`` helpers and written into ``profiler_info.json``. The CPU has no AI-core
counters, L2 cache or msprof_tx data to collect, so these settings change nothing under sim.
"""

from __future__ import annotations

from typing import Any


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


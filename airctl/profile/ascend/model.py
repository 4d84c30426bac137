"""The nouns the readers produce: device tasks, steps, the profiler's own step numbers, and the
warnings met on the way (each with ``file:line`` or ``file: event N``).

>>> t = Task("MatMulV2", "MatMulV2", "2", start_ns=1_000, dur_ns=250, step=1)
>>> t.end_ns, t.is_marker
(1250, False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError

# device tasks that order streams (not work); HCCL's own Notify tasks are not listed: they wait for other ranks
MARKER = re.compile(r"^(EVENT|NOTIFY)_?(RECORD|WAIT)|StreamWaitEvent$|^air\.(record|wait)", re.IGNORECASE)
EVENT_TASK = re.compile(r"^EVENT_(RECORD|WAIT)", re.IGNORECASE)  # a stream waiting for another on one device
COMPUTE_TYPE = re.compile(r"AI_CORE|AI_VECTOR|AI_CPU|MIX_|AIC|AIV|FFTS|KERNEL|^Other$", re.IGNORECASE)  # Task Type
EXAMPLE_LIMIT = 5  # rows quoted per kind of warning; the rest are counted


class ProfileReadError(AirctlError):
    """A profiler folder or one of its files cannot be read."""


@dataclass(slots=True)  # a long profile holds millions: no __dict__ per task
class Task:
    """One device task (a kernel, an HCCL op, an event record/wait). Times are integer ns, absolute."""

    name: str
    type: str  # the op type; the name when the profiler wrote N/A (Level0)
    stream: str | None  # hardware stream id as text ("2"); None until placed
    start_ns: int
    dur_ns: int
    step: int | None = None
    comm: bool = False  # a communication (HCCL) op
    core: str = ""  # Accelerator Core: AI_CORE, AI_VECTOR_CORE, MIX_AIC, COMMUNICATION, ...
    where: str = ""  # "kernel_details.csv:12", for messages
    launch_ns: int | None = None  # when the host launched it (trace_view.json's HostToDevice flow), absolute
    blocks: tuple[int, int] | None = None  # (Block Dim, Mix Block Dim): cores of its kind, and of the other

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.dur_ns

    @property
    def is_marker(self) -> bool:
        return bool(MARKER.search(self.name) or MARKER.search(self.type))


@dataclass
class ProfilerStepRow:
    """One row of ``step_trace_time.csv`` (or ``analysis.db`` StepTraceTime): the profiler's numbers, µs."""

    step: int | None
    device: int | None
    values: dict[str, float]  # column name -> µs
    where: str = ""


@dataclass
class Columns:
    """Which columns of a table were read, which were looked for and not there, which were ignored."""

    file: str
    read: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"read": self.read, "missing": self.missing, "ignored": len(self.ignored)}


@dataclass
class Issues:
    """Warnings, at most EXAMPLE_LIMIT quoted per kind; ``finish()`` adds the counts of the rest."""

    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def warn(self, where: str, message: str, kind: str | None = None) -> None:
        key = kind or message
        self.counts[key] = self.counts.get(key, 0) + 1
        if self.counts[key] <= EXAMPLE_LIMIT:
            self.warnings.append(f"{where}: {message}" if where else message)

    def finish(self) -> list[str]:
        more = [f"… and {n - EXAMPLE_LIMIT} more like '{kind}'" for kind, n in self.counts.items()
                if n > EXAMPLE_LIMIT]
        return self.warnings + more


@dataclass
class RankData:
    """Everything read from one rank's folder."""

    folder: Path
    rank: int | None
    tasks: list[Task]
    tasks_from: str  # kernel_details.csv | ascend_pytorch_profiler*.db | trace_view.json
    streams_from: dict[str, str]  # "compute"/"communication" -> where their streams came from
    host_steps: dict[int, tuple[int, int]] = field(default_factory=dict)  # ProfilerStep#N [start, end) ns
    profiler_steps: list[ProfilerStepRow] = field(default_factory=list)
    profiler_steps_from: str | None = None
    columns: list[Columns] = field(default_factory=list)
    level: str | None = None  # profiler_info's _profiler_level
    device: int | None = None
    host: str | None = None
    simulated: bool = False
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    launches: int = 0  # tasks whose host launch the trace gave

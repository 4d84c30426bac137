"""What one execution of a graph leaves behind: timed ops per stream, sync edges, races.

The multi-stream executor (:mod:`airctl.execute`) produces a :class:`Timeline`; the profile
summaries, the Chrome trace, the timeline picture and ``airctl profile analyze`` (which builds one
from a torch_npu profiler folder) all consume it. Plain data, JSON-able, no torch.

Times are seconds from the start of the step (``start_s``/``end_s``); streams are names
(``"default"`` for the main stream, else the ``_user_stream_label`` / ``stream_tag``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

DEFAULT_STREAM = "default"


@dataclass(slots=True)  # a long profile holds millions: no __dict__ per event
class OpEvent:
    node: str  # FX node name (or the task name on a real NPU)
    op: str  # target, e.g. "aten.mm.default"
    stream: str
    start_s: float
    end_s: float
    source: str | None = None  # "file:line" of the user code
    module: str | None = None
    step: int = 0
    kind: str | None = None  # "communication" for an NPU's HCCL op (airctl profile analyze); None: compute


@dataclass
class SyncEdge:
    """An ordering between streams: ``src`` on ``src_stream`` happens before ``dst`` on ``dst_stream``.

    ``kind``: ``record_wait`` (air.record -> air.wait), ``fork`` (graph start -> side stream, the
    reduce-overhead closure event), ``join`` (side stream -> graph output), ``data`` (a GE data edge
    across streams, synchronised by GE in max-autotune), ``event`` (a torch.npu Event record/wait).
    """

    kind: str
    src: str
    dst: str
    src_stream: str
    dst_stream: str
    time_s: float = 0.0  # when the waiting side was released
    step: int = 0


@dataclass
class Race:
    """A read of a tensor whose producer is not ordered before the reader."""

    reader: str
    producer: str
    reader_stream: str
    producer_stream: str
    reader_source: str | None = None
    producer_source: str | None = None
    message: str = ""


@dataclass
class TaskFacts:
    """What a profiler folder knew of each task beyond its times, one entry per event of its timeline
    (same order): the host's launch (seconds from the step's first task; None: not recorded), the
    Accelerator Core, and (Block Dim, Mix Block Dim). Not written to JSON: a prediction reads it."""

    launch_s: list[float | None] = field(default_factory=list)
    core: list[str] = field(default_factory=list)
    blocks: list[tuple[int, int] | None] = field(default_factory=list)


@dataclass
class Timeline:
    graph: str  # graph id, e.g. "graph_1"
    mode: str  # a label, as written to JSON: the semantics it ran under (a Mode's value), or npu-profile (measured)
    events: list[OpEvent] = field(default_factory=list)
    syncs: list[SyncEdge] = field(default_factory=list)
    races: list[Race] = field(default_factory=list)
    steps: int = 1
    step_seconds: list[float] = field(default_factory=list)  # wall time of each profiled step
    meta: dict[str, Any] = field(default_factory=dict)
    facts: TaskFacts | None = field(default=None, repr=False, compare=False)

    def streams(self) -> list[str]:
        seen: dict[str, None] = {DEFAULT_STREAM: None} if any(e.stream == DEFAULT_STREAM for e in self.events) else {}
        for e in self.events:
            seen.setdefault(e.stream, None)
        return list(seen)

    def to_json(self) -> dict[str, Any]:
        facts, self.facts = self.facts, None
        try:
            out = asdict(self)
        finally:
            self.facts = facts
        del out["facts"]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Timeline:
        return cls(
            graph=data["graph"], mode=data["mode"],
            events=[OpEvent(**e) for e in data.get("events", [])],
            syncs=[SyncEdge(**s) for s in data.get("syncs", [])],
            races=[Race(**r) for r in data.get("races", [])],
            steps=data.get("steps", 1), step_seconds=list(data.get("step_seconds", [])),
            meta=dict(data.get("meta", {})),
        )

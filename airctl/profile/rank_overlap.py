"""A multi-rank profile under sim (airctl profile --nproc): per rank, communication time, compute time and overlap.

Each rank of ``airctl profile --nproc N`` writes its own timelines (one per graph,
``ranks/<rank>/profile/timeline_<graph>.json``); this module puts them side by side:

- **communication** is the time a collective is in flight on a rank, as its executor saw it: the
  collective op (which issues it) and the ``wait_tensor`` that blocks until it completed
  (:func:`airctl.graph.roles.collective_kind`, :func:`~airctl.graph.roles.is_collective_wait`);
- **compute** is the time any other op runs, on any stream (record/wait/scope markers excluded);
- **overlap** is the time both happen at once, and ``overlap_pct`` the share of the
  communication hidden under compute (``100 * overlap / communication``).

Each number is the union of intervals within one step (overlapping ops count once), from the
step whose span is the median, as for the single-rank summaries (:mod:`airctl.profile.summary`).
:func:`merged` makes a rank's graphs one timeline: one Chrome trace of them has a process per rank and a lane
per stream.

>>> from airctl.execute.timeline import OpEvent, Timeline
>>> t = Timeline("graph_1", "max-autotune", events=[
...     OpEvent("all_reduce", "_c10d_functional.all_reduce.default", "comm", 0.0, 0.1),
...     OpEvent("wait_tensor", "_c10d_functional.wait_tensor.default", "comm", 0.1, 2.0),
...     OpEvent("addmm_1", "aten.addmm.default", "default", 0.5, 1.5)])
>>> p = rank_profile(0, [t])
>>> (p.comm_s, p.compute_s, p.overlap_s, round(p.overlap_pct, 1))
(2.0, 1.0, 1.0, 50.0)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from statistics import median
from typing import Any

from airctl.execute.timeline import OpEvent, Timeline
from airctl.graph.roles import collective_kind, is_collective_wait
from airctl.profile import events as ev


def is_comm(op: str) -> bool:
    """A collective, or the wait for one."""
    return collective_kind(op) is not None or is_collective_wait(op)


@dataclass
class RankProfile:
    rank: int
    comm_s: float
    compute_s: float
    overlap_s: float
    span_s: float
    step: int | None  # the representative step
    streams: dict[str, float] = field(default_factory=dict)  # stream -> busy seconds in that step
    comm_ops: int = 0
    races: list[str] = field(default_factory=list)  # "reader (stream) reads producer (stream) unordered"
    step_s: float | None = None  # median wall time of the rank's profiled steps

    @property
    def overlap_pct(self) -> float:
        return 100.0 * self.overlap_s / self.comm_s if self.comm_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "overlap_pct": self.overlap_pct}


def merged(rank: int, timelines: list[Timeline]) -> Timeline:
    """A rank's graphs as one timeline (they share each step's clock); lanes ``<graph>:<stream>``
    when the rank ran several graphs."""
    several = len({t.graph for t in timelines}) > 1
    out = Timeline(f"rank {rank}", "/".join(sorted({t.mode for t in timelines})) or "max-autotune")
    for t in timelines:
        lane = (lambda s, g=t.graph: f"{g}:{s}") if several else (lambda s: s)
        out.events += [replace(e, stream=lane(e.stream)) for e in t.events]
        out.syncs += [replace(s, src_stream=lane(s.src_stream), dst_stream=lane(s.dst_stream)) for s in t.syncs]
        out.races += t.races
        out.step_seconds = [a + b for a, b in zip(out.step_seconds, t.step_seconds, strict=False)] or list(
            t.step_seconds)
    out.steps = len(ev.step_ids(out))
    out.meta = {"rank": rank, "graphs": [t.graph for t in timelines]}
    return out


def rank_profile(rank: int, timelines: list[Timeline]) -> RankProfile:
    """Communication, compute and their overlap in the rank's median step (see the module doc)."""
    tl = merged(rank, timelines)
    step = ev.representative_step(tl)
    events: list[OpEvent] = ev.step_events(tl, step) if step is not None else []
    comm = ev.union((e.start_s, e.end_s) for e in events if is_comm(e.op))
    compute = ev.union((e.start_s, e.end_s) for e in events if not is_comm(e.op) and not ev.is_marker(e.op))
    a, b = ev.span(events)
    streams: dict[str, float] = {}
    for s in tl.streams():
        streams[s] = ev.length(ev.union((e.start_s, e.end_s) for e in events if e.stream == s
                                        and not ev.is_marker(e.op)))
    return RankProfile(rank, ev.length(comm), ev.length(compute), ev.overlap({"comm": comm, "compute": compute}),
                       b - a, step, streams, sum(1 for e in events if collective_kind(e.op) is not None),
                       list(dict.fromkeys(f"{r.reader} (stream {r.reader_stream}) reads {r.producer} "
                                          f"(stream {r.producer_stream}) with no ordering" for r in tl.races)),
                       median(tl.step_seconds) if tl.step_seconds else None)


def read_timelines(rank_ledger: Path) -> list[Timeline]:
    """The timelines a rank's profile wrote (``profile/timeline_*.json``), in file order."""
    import json

    folder = Path(rank_ledger) / "profile"
    return [Timeline.from_json(json.loads(p.read_text(encoding="utf-8")))
            for p in sorted(folder.glob("timeline_*.json"))]

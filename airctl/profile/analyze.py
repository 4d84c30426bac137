"""``airctl profile analyze DIR``: torch_npu profiler folders read back, one Timeline per rank.

DIR is the directory given to ``tensorboard_trace_handler`` (one ``*_ascend_pt`` folder per rank,
maybe per node below it), one such folder, or its ``ASCEND_PROFILER_OUTPUT``. Every rank found is
read (:mod:`airctl.profile.ascend`): tasks with exact integer-ns times from ``kernel_details.csv``
(else the ``.db`` export, else ``trace_view.json``), each on its hardware stream, communication
ops marked; the per-step breakdown (computing, communication, overlapped, free) computed as the
profiler defines it and checked against its ``step_trace_time.csv``.

>>> from pathlib import Path
>>> a = analyze(Path(__file__).parents[2] / "fixtures" / "profiles" / "npu_two_streams")
>>> [r.rank for r in a.ranks], a.ranks[0].timeline.meta["tasks_from"]
([0], 'kernel_details.csv')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.execute.timeline import Timeline
from airctl.profile.ascend.breakdown import StepBreakdown, breakdown, check
from airctl.profile.ascend.cross_rank import cross_rank
from airctl.profile.ascend.folders import find_rank_folders
from airctl.profile.ascend.model import ProfileReadError, RankData
from airctl.profile.ascend.read import read_rank
from airctl.profile.ascend.timeline import to_timeline
from airctl.profile.ledger_link import link_to_ledger

__all__ = ["Analysis", "ProfileReadError", "RankAnalysis", "analyze"]


@dataclass
class RankAnalysis:
    data: RankData
    timeline: Timeline
    steps: list[StepBreakdown]
    check: dict[str, Any] | None = None

    @property
    def rank(self) -> int | None:
        return self.data.rank

    def npu_json(self) -> dict[str, Any]:
        """What ``--json`` adds for a profiler folder (key ``npu``): sources, columns, per-step numbers."""
        d = self.data
        return {"rank": d.rank, "device": d.device, "level": d.level, "folder": str(d.folder),
                "tasks_from": d.tasks_from, "streams_from": dict(d.streams_from),
                "columns": {c.file: c.to_json() for c in d.columns},
                "steps": [s.to_json() for s in self.steps], "check": self.check, "warnings": list(d.warnings)}


@dataclass
class Analysis:
    path: Path
    ranks: list[RankAnalysis]
    notes: list[str] = field(default_factory=list)
    cross_rank: dict[str, Any] | None = None

    @property
    def timelines(self) -> list[Timeline]:
        return [r.timeline for r in self.ranks]

    @property
    def warnings(self) -> list[str]:
        several = len(self.ranks) > 1
        return [f"rank {r.rank}: {w}" if several else w for r in self.ranks for w in r.data.warnings]


def analyze(path: Path, ledger: Path | None = None, progress: Callable[[str], None] | None = None) -> Analysis:
    """Read every rank under ``path``; with ``ledger``, link tasks to its graph nodes (``progress``: what is
    being read, for big files)."""
    folders, notes = find_rank_folders(Path(path))
    ranks = []
    for f in folders:
        data = read_rank(f, progress)
        graph = f.path.name if len(folders) == 1 else f"rank {data.rank if data.rank is not None else '?'}"
        steps = breakdown(data.tasks, data.host_steps)
        checked = check(steps, data.profiler_steps, data.device, data.profiler_steps_from or "") \
            if data.profiler_steps else None
        # one rank: its tasks become the timeline's events one by one (memory holds one of the two);
        # several: cross_rank reads the tasks again
        timeline = to_timeline(data, graph, consume=len(folders) == 1)
        if ledger is not None:
            timeline.meta["links"] = link_to_ledger(timeline, Path(ledger))
        timeline.meta["notes"] = notes if len(folders) == 1 else []
        ranks.append(RankAnalysis(data, timeline, steps, checked))
    result = Analysis(Path(path), ranks, notes)
    if len(ranks) > 1:
        result.cross_rank = cross_rank([(r.data, r.steps) for r in ranks])
    return result

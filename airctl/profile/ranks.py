"""The summary of ``airctl profile analyze``: one :class:`ProfileSummary` per rank, and for a
folder of several ranks the cross-rank view next to them.

``--json`` prints the single-rank summary as for any profile (plus its ``npu`` section); for
several ranks ``{"ranks": [{"rank": N, ...that summary}], "cross_rank": {...}, "trace", "meta"}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airctl.profile.analyze import Analysis, RankAnalysis
from airctl.profile.summary import ProfileSummary, summarize


@dataclass
class RankSummary:
    rank: int | None
    summary: ProfileSummary


@dataclass
class MultiRankSummary:
    ranks: list[RankSummary]
    cross_rank: dict[str, Any]
    trace: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"ranks": [{"rank": r.rank, **r.summary.to_json()} for r in self.ranks],
                "cross_rank": self.cross_rank, "trace": self.trace, "meta": dict(self.meta)}


def summarize_rank(r: RankAnalysis, top: int = 10) -> ProfileSummary:
    summary = summarize([r.timeline], top=top)
    meta = r.timeline.meta
    summary.meta.update({k: meta.get(k) for k in ("folder", "rank", "tasks_from", "streams_from", "simulated",
                                                  "links")})
    summary.meta["notes"] = list(meta.get("notes", []))
    summary.npu = r.npu_json()
    return summary


def summarize_analysis(analysis: Analysis, top: int = 10) -> ProfileSummary | MultiRankSummary:
    if len(analysis.ranks) == 1:
        return summarize_rank(analysis.ranks[0], top)
    ranks = [RankSummary(r.rank, summarize_rank(r, top)) for r in analysis.ranks]
    return MultiRankSummary(ranks, analysis.cross_rank or {},
                            meta={"folder": str(analysis.path), "notes": list(analysis.notes),
                                  "simulated": any(r.data.simulated for r in analysis.ranks)})

"""``airctl profile MODEL.py --nproc N``: profile every rank, then put the ranks side by side.

Every rank runs :func:`~airctl.pipeline.profile.profile_model` in its own process
(:mod:`~airctl.pipeline.ranks.launch`, ``command = "profile"``): compile, the checked run, warmup and
profiled steps on the multi-stream executor, its own summary in ``ranks/<rank>/profile/``. The
collectives synchronise the ranks step by step. Then the top ledger gets:

- ``profile/trace.json``: one Chrome trace, a process per rank and a lane per stream;
- ``profile/ranks.json``: per rank the communication, compute and overlap numbers
  (:mod:`airctl.profile.rank_overlap`), and the races each rank's executor saw.

``--compare`` does it twice, without and then with the passes, and keeps both top ledgers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.modes import Mode
from airctl.pipeline.profile import ProfileRequest
from airctl.pipeline.ranks.launch import RanksRequest, RanksResult, nproc_argv, run_ranks
from airctl.pipeline.ranks.worker import RankRequest
from airctl.profile.chrome_trace import write_chrome_trace
from airctl.profile.rank_overlap import RankProfile, merged, rank_profile, read_timelines
from airctl.profile.write import PROFILE_DIR, TRACE_FILE, write_json

RANKS_FILE = "ranks.json"


@dataclass
class RanksProfile:
    """One multi-rank profile: the launch, and per rank its numbers."""

    result: RanksResult
    ranks: list[RankProfile] = field(default_factory=list)
    trace: Path | None = None
    passes_file: str | None = None
    mode: Mode | None = None

    def to_json(self) -> dict[str, Any]:
        return {"ledger": str(self.result.ledger_dir), "status": self.result.index.status,
                "mode": self.mode.value if self.mode else None,
                "passes_file": self.passes_file, "trace": str(self.trace) if self.trace else None,
                "ranks": [r.to_json() for r in self.ranks],
                "divergence": self.result.divergence, "simulated": True}


@dataclass
class RanksProfileOutcome:
    runs: list[RanksProfile]  # one, or without and with the passes (--compare)

    def to_json(self) -> dict[str, Any]:
        if len(self.runs) == 1:
            return self.runs[0].to_json()
        return {"without": self.runs[0].to_json(), "with": self.runs[1].to_json()}

    @property
    def races(self) -> int:
        return sum(len(r.races) for run in self.runs for r in run.ranks)


def profile_ranks(req: ProfileRequest, nproc: int, *, compare: bool = False,
                  progress: Callable[[str], None] | None = None) -> RanksProfileOutcome:
    """Profile ``nproc`` ranks of ``req.model_path`` (twice with ``compare``: without, then with the passes)."""
    runs = []
    requests = [req.without_passes(), req] if compare else [req]
    for one in requests:
        rank = RankRequest(command="profile", target=one.target, steps=one.steps, warmup=one.warmup)
        result = run_ranks(RanksRequest(nproc_argv(nproc, one.target.model_path), rank, out_dir=Path(one.out_dir),
                                        command="profile"), progress=progress)
        runs.append(_merge(result, one))
        if result.exit_code or result.error is not None:
            break
    return RanksProfileOutcome(runs)


def _merge(result: RanksResult, req: ProfileRequest) -> RanksProfile:
    """Per-rank numbers and the one trace, written into the top ledger's ``profile/``."""
    per_rank = {e.rank: read_timelines(result.ledger_dir / e.ledger) for e in result.ranks if e.ledger}
    per_rank = {r: tls for r, tls in per_rank.items() if tls}
    out = RanksProfile(result, [rank_profile(r, tls) for r, tls in sorted(per_rank.items())],
                       passes_file=str(req.target.passes_file) if req.target.passes_file else None,
                       mode=req.target.mode)
    if per_rank:
        folder = result.ledger_dir / PROFILE_DIR
        folder.mkdir(parents=True, exist_ok=True)
        out.trace = folder / TRACE_FILE
        meta = {"ranks": sorted(per_rank), "mode": str(req.target.mode), "passes_file": out.passes_file}
        write_chrome_trace(out.trace, [merged(r, tls) for r, tls in sorted(per_rank.items())], meta)
        write_json(folder / RANKS_FILE, out.to_json())
    return out

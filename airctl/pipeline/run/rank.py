"""Where one rank of a multi-rank run writes: the one declaration every request shares.

A rank's compile, profile or ``airctl run`` (:mod:`airctl.pipeline.ranks.worker`) writes its ledger
into exactly ``<top>/ranks/<rank>``, says in it which rank it is, logs its collectives, and gives its
process groups the run's timeout. Each request takes these as one typed field (``rank``), never as
loose fields repeated per request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.ledger.collectives import CollectiveLog


@dataclass
class RankRun:
    root: Path  # the rank's ledger folder, ranks/<rank>
    fields: dict[str, Any] = field(default_factory=dict)  # index.json: rank, world_size, local_rank, pid, ...
    collectives: CollectiveLog | None = None  # the rank's collective log (ledger/collectives.py)
    collective_timeout_s: float | None = None  # the process groups' default timeout (a divergence fails fast)


def timeout_of(rank: RankRun | None) -> float | None:
    return rank.collective_timeout_s if rank is not None else None


def collectives_of(rank: RankRun | None) -> CollectiveLog | None:
    return rank.collectives if rank is not None else None

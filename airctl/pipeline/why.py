"""``airctl why``: the table of a run's graph breaks, recompiles, recaptures and cache decisions.

The run is found as every command finds one (:func:`airctl.pipeline.source.resolve_source`: a run
id, a unique part, ``latest``, a ledger folder, ``--run``, or the current run); the table is built from its
``index.json`` by :func:`airctl.why.why_table`, whether the run recorded the events itself or
``airctl import`` read them from an NPU machine's logs. A multi-rank run's events are in its rank
ledgers: the top ledger answers with one table per rank.

>>> why_run(None, Path("airctl-runs")).rows[0].cls     # doctest: +SKIP
'recompile'
"""

from __future__ import annotations

from pathlib import Path

from airctl.ledger.reader import Ledger
from airctl.pipeline.source import resolve_source
from airctl.why import WhyTable, why_table


def why_run(run: str | Path | None, out_dir: Path, run_opt: str | None = None) -> WhyTable:
    """The table of one run, RUN or ``--run`` (a multi-rank run's ranks, one after the other, each row
    naming its rank)."""
    root = resolve_source(run, run_opt, out_dir=out_dir).path
    index = Ledger.open(root).index
    if not index.is_multi_rank:
        return why_table(index)
    rows = []
    for rank in index.ranks or []:
        folder = root / (rank.ledger or f"ranks/{rank.rank}")
        if not (folder / "index.json").is_file():
            continue
        for row in why_table(Ledger.open(folder).index).rows:
            row.n = len(rows) + 1
            row.detail = {**row.detail, "rank": rank.rank}
            row.graph = f"rank {rank.rank}: {row.graph}" if row.graph else f"rank {rank.rank}"
            rows.append(row)
    return WhyTable(run_id=index.run_id, origin="recorded", rows=rows)

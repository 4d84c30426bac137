"""``airctl why``: the table of a run's graph breaks, recompiles, recaptures and cache decisions.

The run is found as every command finds one (:func:`airctl.pipeline.source.resolve_source`: a run
id, a unique part, ``latest``, a ledger folder, ``--run``, or the current run); the table is built from its
``index.json``, read one event at a time (:func:`airctl.why.stream.why_streamed`, bounded memory
whatever the number of events), whether the run recorded the events itself or
``airctl import`` read them from an NPU machine's logs. A multi-rank run's events are in its rank
ledgers: the top ledger answers with one table per rank.

>>> next(why_run(None, Path("airctl-runs")).iter_rows()).cls     # doctest: +SKIP
'recompile'
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

from airctl.ledger_files import is_ledger
from airctl.pipeline.source import resolve_source
from airctl.why import WhyRow, WhyTable
from airctl.why.stream import why_streamed


def why_run(run: str | Path | None, out_dir: Path, run_opt: str | None = None) -> WhyTable:
    """The table of one run, RUN or ``--run`` (a multi-rank run's ranks, one after the other, each row
    naming its rank). The rows are read from the ledger as they are shown (:mod:`airctl.why.stream`)."""
    root = resolve_source(run, run_opt, out_dir=out_dir).path
    table, index = why_streamed(root)
    if not index.is_multi_rank:
        return table
    ranks = []
    for rank in index.ranks or []:
        folder = root / (rank.ledger or f"ranks/{rank.rank}")
        if is_ledger(folder):
            ranks.append((rank.rank, why_streamed(folder)[0]))
    counts: dict[str, int] = {}
    for _, each in ranks:
        for kind, n in each.counts().items():
            counts[kind] = counts.get(kind, 0) + n

    def rows() -> Iterator[WhyRow]:
        numbers = itertools.count(1)
        for number, each in ranks:
            for row in each.iter_rows():
                row.n = next(numbers)
                row.detail = {**row.detail, "rank": number}
                row.graph = f"rank {number}: {row.graph}" if row.graph else f"rank {number}"
                yield row

    return WhyTable(index.run_id, "recorded", rows, counts, table.failed)

"""``airctl why`` of a multi-rank run: the top ledger answers with every rank's rows (airctl/pipeline/why.py)."""

from __future__ import annotations

from pathlib import Path

from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.why import why_run


def test_a_multi_rank_run_lists_each_ranks_rows_with_its_rank(tmp_path: Path) -> None:
    top = LedgerWriter.create(tmp_path, "ranks", command="run", graphs=[],
                              ranks=[{"rank": 0, "ledger": "ranks/0"}, {"rank": 1, "ledger": "ranks/1"}])
    for rank, old in ((0, 4), (1, 6)):
        writer = LedgerWriter.create_at(top.root / "ranks" / str(rank), command="run", graphs=[])
        writer.add_event({"kind": "recompile", "reason": f"x.size(0) was {old}, now 8", "file": "/t.py", "line": 3,
                          "graph": "2-forward"})
        writer.finish()
    top.finish()
    table = why_run(top.root, tmp_path)
    assert [(r.n, r.reason, r.graph, r.detail["rank"]) for r in table.iter_rows()] == [
        (1, "x.size(0) was 4, now 8", "rank 0: 2-forward", 0), (2, "x.size(0) was 6, now 8", "rank 1: 2-forward", 1)]

"""``passes suggest`` reads graphs from compiles of its own: they do not become the current run (issue 62),
so the ``check`` or ``profile`` typed next looks at the user's run, not at a single-stream ledger."""

from __future__ import annotations

from pathlib import Path

from airctl.ledger.runs import latest_run
from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.suggest_check import keeping_current


def test_the_users_current_run_stays_current(tmp_path: Path) -> None:
    mine = LedgerWriter.create(tmp_path, "mine", command="compile", graphs=[])
    mine.finish()
    with keeping_current(tmp_path):
        LedgerWriter.create(tmp_path, "suggest", command="passes suggest", graphs=[]).finish()
        assert latest_run(tmp_path) != mine.root  # a run ends as the current one ...
    assert latest_run(tmp_path) == mine.root  # ... and suggest gives the place back


def test_no_current_run_before_is_none_after(tmp_path: Path) -> None:
    with keeping_current(tmp_path):
        LedgerWriter.create(tmp_path, "suggest", command="passes suggest", graphs=[]).finish()
    assert not (tmp_path / "latest").exists()


def test_the_runs_own_plan_is_predicted_without_writing_into_the_run(tmp_path: Path) -> None:
    """suggest compares with the user's run: asking its step files no prediction into that run's ledger."""
    import shutil

    from airctl.pipeline.suggest_check import current_step

    ledger = tmp_path / "ledger"
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures" / "profiles" / "seed_ledger", ledger)
    before = sorted(p.relative_to(ledger) for p in ledger.rglob("*"))
    current_step(ledger, "estimate", tmp_path, None)
    assert sorted(p.relative_to(ledger) for p in ledger.rglob("*")) == before

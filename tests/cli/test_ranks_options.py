"""``compile --nproc N``: every rank compiles with the options ``airctl compile`` was given (``--dump-type``,
``--option`` were dropped), and ``--fail-on`` is judged on each rank's ledger (it was ignored). The ranks
themselves are tests/run/test_multirank.py's; here the launcher is replaced by one that records."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.ledger.index import RankEntry
from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.ranks import launch
from tests.conftest import MODELS

RACE = {"message": "add (m.py:3) on the default stream reads mm (m.py:2) produced on stream '1'",
        "reader": "add", "value": "mm"}


def _launcher(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, races: dict[int, list]) -> list:
    """run_ranks replaced: records the request, leaves a rank ledger per rank with ``races[rank]``."""
    asked: list = []

    def run_ranks(req: launch.RanksRequest, progress: object = None) -> launch.RanksResult:
        asked.append(req)
        top = tmp_path / "top"
        whole = LedgerWriter.create_at(top, command="compile", mode="reduce-overhead")
        entries = []
        for rank, found in races.items():
            ledger = LedgerWriter.create_at(top / "ranks" / str(rank), command="compile", mode="reduce-overhead")
            ledger.set(execution={"matches_eager": True, "races": found})
            ledger.finish()
            entries.append(RankEntry(rank=rank, status="ok", exit_code=0, ledger=f"ranks/{rank}"))
        whole.finish()
        return launch.RanksResult(top, whole.run_index, entries)

    monkeypatch.setattr(launch, "run_ranks", run_ranks)
    return asked


def test_dump_type_and_option_reach_every_rank(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked = _launcher(monkeypatch, tmp_path, {0: [], 1: []})
    r = CliRunner().invoke(build_app(), ["compile", str(MODELS / "seed.py"), "--nproc", "2", "--dump-type", "py",
                                         "--option", "capture_limit=2", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    (request,) = asked
    assert request.rank.target.dump_types == ("py",) and request.rank.target.options == {"capture_limit": "2"}


def test_a_bad_option_is_refused_before_any_rank_starts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked = _launcher(monkeypatch, tmp_path, {0: []})
    r = CliRunner().invoke(build_app(), ["compile", str(MODELS / "seed.py"), "--nproc", "2", "--option", "novalue",
                                         "--out", str(tmp_path)])
    assert r.exit_code == 2 and asked == []


@pytest.mark.parametrize("fail_on, code", [(None, 0), ("race", 1)])
def test_fail_on_is_judged_on_every_ranks_ledger(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 fail_on: str | None, code: int) -> None:
    _launcher(monkeypatch, tmp_path, {0: [], 1: [RACE]})
    args = ["compile", str(MODELS / "seed.py"), "--nproc", "2", "--out", str(tmp_path)]
    r = CliRunner().invoke(build_app(), args + (["--fail-on", fail_on] if fail_on else []))
    assert r.exit_code == code, r.output
    if fail_on:
        verdicts = r.stderr[r.stderr.index("--fail-on"):]
        assert f"--fail-on race: rank 1: {RACE['message']}" in verdicts and "rank 0:" not in verdicts

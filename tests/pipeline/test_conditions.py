"""The "bad" conditions of airctl bisect / compile --fail-on, judged on run indexes (no compile)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from airctl.errors import AirctlError
from airctl.ledger.index import RunIndex
from airctl.pipeline.bisect.conditions import Condition
from airctl.pipeline.bisect.repro import infer_bad


def run(tmp_path: Path, **fields: object) -> SimpleNamespace:
    data = {"status": "ok", "graphs": [], "execution": {"matches_eager": True, "max_abs_error": 0.0, "races": []},
            **fields}
    return SimpleNamespace(index=RunIndex.read(data), ledger_dir=tmp_path)


RACE = {"matches_eager": True, "races": [{"message": "add reads mm on stream_1"}]}
WRONG = {"matches_eager": False, "mismatches": ["out[0]: max abs error 1.4"], "races": []}
EAGER_CHECK = [{"id": "1-inference", "stages": [{"index": 0, "name": "yaml:p", "file": "x.json",
                                                 "eager_check": {"matches": False, "mismatches": ["out[0]"]}}]}]


@pytest.mark.parametrize(("kind", "fields", "bad"), [
    ("numerics", {"execution": WRONG, "status": "mismatch"}, True),
    ("numerics", {"status": "failed", "execution": None, "graphs": EAGER_CHECK}, True),  # stopped by the check
    ("numerics", {}, False),
    ("race", {"execution": RACE}, True),
    ("race", {}, False),
    ("compile", {"status": "failed", "error": "TorchAir failed", "execution": None}, True),
    ("compile", {"execution": WRONG, "status": "mismatch"}, False),
])
def test_each_kind(tmp_path: Path, kind: str, fields: dict, bad: bool) -> None:
    assert Condition.make(kind).judge(run(tmp_path, **fields)).bad is bad


def test_a_race_cannot_show_in_a_failed_compile(tmp_path: Path) -> None:
    verdict = Condition.make("race").judge(run(tmp_path, status="failed", error="boom", execution=None))
    assert (verdict.bad, verdict.unresolved) == (False, True) and "boom" in verdict.why


def test_expr_and_cmd(tmp_path: Path) -> None:
    assert Condition.make(bad_if="len(races) == 1").judge(run(tmp_path, execution=RACE)).bad
    (tmp_path / "marker").write_text("x")
    assert Condition.make(bad_cmd="test -f {ledger}/marker").judge(run(tmp_path)).bad is False
    verdict = Condition.make(bad_cmd='test -f "$AIRCTL_LEDGER/missing"').judge(run(tmp_path))
    assert verdict.bad and "exited 1" in verdict.why


def test_one_condition_only() -> None:
    with pytest.raises(AirctlError, match="one of --bad"):
        Condition.make("race", bad_if="True")


def test_repro_reads_what_failed_from_the_run(tmp_path: Path) -> None:
    assert infer_bad(run(tmp_path, execution=RACE).index) == "race"
    assert infer_bad(run(tmp_path, status="mismatch", execution=WRONG).index) == "numerics"
    assert infer_bad(run(tmp_path, status="failed", execution=None).index) == "compile"
    assert infer_bad(run(tmp_path, findings=[{"severity": "error", "rule": "r"}]).index) == "check"
    with pytest.raises(AirctlError, match="did not fail"):
        infer_bad(run(tmp_path).index)

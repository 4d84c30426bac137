"""One command lists every op that stops GE conversion, and compile and coverage list the same ones
(issue 62: Llama 4's failure named ``eq.Tensor`` only, coverage ``polar`` only; TorchAir's
"Inputs data type mismatch 12 vs. 12" said with the graph's dtype names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app

pytestmark = pytest.mark.slow
MODEL = Path(__file__).resolve().parents[2] / "fixtures" / "models" / "mixed_dtypes.py"
runner = CliRunner()


def test_compile_and_coverage_name_both_blockers(tmp_path: Path) -> None:
    r = runner.invoke(build_app(), ["compile", "--out", str(tmp_path), "--backend", "sim", "--mode", "max-autotune",
                                    "--capture", "minimal", str(MODEL), "--json"])
    assert r.exit_code != 0
    detail = json.loads(r.stdout)["error_detail"]
    compiled = [u["op"] for u in detail["unconvertible"]]
    assert compiled == ["aten.eq.Tensor", "aten.polar.default"]
    assert "int64 vs bool" in json.loads(r.stdout)["error"] and "12 vs. 12" not in json.loads(r.stdout)["error"]
    r = runner.invoke(build_app(), ["coverage", "--out", str(tmp_path), str(MODEL), "--json"])
    covered = [u["op"] for u in json.loads(r.stdout)["unconvertible"]]
    assert covered == compiled

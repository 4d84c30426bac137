"""The loop's commands agree on one plan (issue 62): ``passes apply``'s count for another mode is
``check --mode``'s, the race hint ``apply`` and ``check`` print is the YAML ``passes fix`` writes, and
a clean ``apply`` says the plan is race-free as a racy one says it races."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "fixtures" / "models" / "seed.py"
runner = CliRunner()


def airctl(*args: object):  # noqa: ANN201
    return runner.invoke(build_app(), [str(a) for a in args])


def apply(tmp_path: Path, passes: str):  # noqa: ANN201
    r = airctl("passes", "apply", ROOT / "fixtures" / "passes" / passes, "-M", SEED, "--out", tmp_path,
               "--mode", "reduce-overhead", "--backend", "sim")
    assert r.exit_code == 0, r.output
    return r


def test_apply_and_check_count_another_modes_errors_alike_and_hint_what_fix_writes(tmp_path: Path) -> None:
    r = apply(tmp_path, "racy_no_wait.yaml")
    assert "plan under other modes: 2 errors in npugraph_ex" in r.output
    assert "race-free" not in r.output
    checked = airctl("check", "--out", tmp_path, "--mode", "npugraph_ex", "--json")
    errors = [f for f in json.loads(checked.stdout)["findings"] if f["severity"] == "error"]
    assert len(errors) == 2  # the pass file's air.* ops are npugraph_ex's in that mode: not the plan's fault
    fixed = airctl("passes", "fix", "--runs", tmp_path, "--no-check", "-o", tmp_path / "fixed.yaml")
    assert fixed.exit_code == 0, fixed.output
    written = (tmp_path / "fixed.yaml").read_text()
    for name in ("sub-waits-for-mm-abs-on-stream1", "add-waits-for-mm-abs-on-stream1"):
        assert f"- name: {name}" in written and f"- name: {name}" in r.output  # apply's hint is fix's YAML
    for f in errors:  # each of check's race hints is the part of fix's YAML that closes that race
        assert f["hint"].startswith("`airctl passes fix` appends these passes")
        for line in f["hint"].splitlines()[1:]:
            assert line.strip() in written


def test_a_clean_apply_says_race_free(tmp_path: Path) -> None:
    r = apply(tmp_path, "ordered_wait.yaml")
    assert "stream plan: race-free in reduce-overhead" in r.output and "npugraph_ex" in r.output

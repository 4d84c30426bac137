"""Bad input to `airctl compile`: a clear message, exit code != 0, and index.json with the error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from tests.conftest import BAD, MODELS

runner = CliRunner()


def _compile(args: list[str], out: Path):
    result = runner.invoke(build_app(), ["compile", *args, "--out", str(out), "--backend", "sim"])
    runs = sorted(p for p in out.iterdir() if p.is_dir())
    assert len(runs) == 1, "exactly one ledger per run"
    index = json.loads((runs[0] / "index.json").read_text())
    return result, index


def test_missing_file(tmp_path: Path) -> None:
    result, index = _compile([str(BAD / "does_not_exist.py")], tmp_path)
    assert result.exit_code == 2
    assert "model script not found" in result.output and "does_not_exist.py" in result.output
    assert index["status"] == "failed" and "not found" in index["error"]


def test_script_raising_at_import_shows_its_line(tmp_path: Path) -> None:
    result, index = _compile([str(BAD / "raises_at_import.py")], tmp_path)
    assert result.exit_code == 4  # the user's own script raised: exit 4, not bad input and not TorchAir
    assert "raises_at_import.py:7" in result.output and "importing the script raised NameError" in result.output
    assert "NameError" in result.output and "undefined_name" in result.output
    assert index["error_detail"]["line"] == 7


def test_no_entry_lists_what_was_looked_for(tmp_path: Path) -> None:
    result, index = _compile([str(BAD / "no_entry.py")], tmp_path)
    assert result.exit_code == 2
    assert "no model and example inputs found" in result.output
    assert "get_model()" in index["error_detail"]["hint"] and "get_inputs()" in index["error_detail"]["hint"]


def test_unknown_entry_name_lists_callables(tmp_path: Path) -> None:
    result, index = _compile([str(MODELS / "seed.py"), "--entry", "nope"], tmp_path)
    assert result.exit_code == 2
    assert "get_model" in index["error_detail"]["hint"]


def test_invalid_mode_is_a_usage_error_naming_the_modes(tmp_path: Path) -> None:
    result = runner.invoke(build_app(), ["compile", str(MODELS / "seed.py"), "--mode", "fast", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "'fast' is not one of 'max-autotune', 'reduce-overhead'" in " ".join(result.output.replace("│", " ").split())
    assert list(tmp_path.iterdir()) == [], "refused while parsing the options: nothing ran"


def test_pbtxt_dump_in_reduce_overhead_is_refused_like_torchair(tmp_path: Path) -> None:
    result, index = _compile([str(MODELS / "seed.py"), "--mode", "reduce-overhead", "--dump-type", "pbtxt"], tmp_path)
    assert result.exit_code == 2
    assert "only 'py'" in index["error_detail"]["hint"]


@pytest.mark.slow
def test_unconvertible_op_names_fx_node_and_source_line(tmp_path: Path) -> None:
    result, index = _compile([str(BAD / "unconvertible.py")], tmp_path)
    assert result.exit_code == 3
    detail = index["error_detail"]
    assert detail["node"] == "amax"
    assert detail["file"].endswith("unconvertible.py") and detail["line"] == 9
    assert "aten.amax.default ge_converter is not implemented" in index["error"]
    stages = [s["name"] for s in index["graphs"][0]["stages"]]
    assert "fx-final" in stages, "what was captured before the failure is kept"


@pytest.mark.slow
def test_coverage_lists_each_op_once_and_points_at_its_own_json(tmp_path: Path) -> None:
    r = runner.invoke(build_app(), ["coverage", str(BAD / "unconvertible.py"), "--backend", "sim",
                                         "--out", str(tmp_path)])
    assert r.exit_code == 3, r.output
    assert "aten.amax.default: stub, 1 node(s) first at " in r.output and "unconvertible.py:9" in r.output
    error = next(line for line in r.output.splitlines() if line.startswith("error:"))
    assert "the 1 op(s) above" in error and "unconvertible.py:9" not in error  # said once, above
    assert "`airctl coverage ... --json`" in r.output and "airctl compile ... --json" not in r.output

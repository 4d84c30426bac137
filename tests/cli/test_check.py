"""``airctl check`` in-process: exit codes, --json, ledgers, dumps, unreadable input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.cli.main import run

REPO = Path(__file__).resolve().parents[2]
CHECKS = REPO / "fixtures" / "checks"
DUMPS = Path(__file__).resolve().parents[2] / "fixtures" / "dumps"
runner = CliRunner()


def check(*args: str):  # noqa: ANN201
    return runner.invoke(build_app(), ["check", *map(str, args)])


def test_clean_graph_exits_0() -> None:
    r = check(CHECKS / "ok" / "two_stream_plan.json", "--mode", "reduce-overhead")
    assert r.exit_code == 0, r.output
    assert "no findings" in r.stdout


def test_error_finding_exits_1_and_json_shape() -> None:
    r = check(CHECKS / "fx" / "race_cross_stream_without_wait.json", "--mode", "reduce-overhead", "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["errors"] == 2 and doc["warnings"] == 0
    assert {f["rule"] for f in doc["findings"]} == {"race_cross_stream_without_wait"}
    assert set(doc["findings"][0]) >= {"rule", "severity", "mode", "nodes", "source", "message", "hint"}


def test_same_graph_in_max_autotune_is_not_an_error() -> None:
    r = check(CHECKS / "fx" / "race_cross_stream_without_wait.json", "--mode", "max-autotune", "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout)["errors"] == 0


def test_warning_only_exits_0_and_text_names_rule_and_hint() -> None:
    r = check(CHECKS / "fx" / "wait_on_const.json")
    assert r.exit_code == 0
    assert "warning[wait_on_const R8]" in r.stdout and "hint:" in r.stdout


def test_ge_graph_is_checked_as_max_autotune() -> None:
    r = check(CHECKS / "ge" / "deadlock_cycle.json", "--mode", "reduce-overhead", "--json")
    assert r.exit_code == 1
    [f] = json.loads(r.stdout)["findings"]
    assert (f["rule"], f["mode"]) == ("deadlock_cycle", "max-autotune")


def _ledger(tmp_path: Path, mode: str = "reduce-overhead") -> Path:
    root = tmp_path / "run"
    (root / "graphs" / "g0").mkdir(parents=True)
    shutil.copy(CHECKS / "ok" / "seed_clean.json", root / "graphs" / "g0" / "000-aot-inference.json")
    shutil.copy(CHECKS / "fx" / "race_cross_stream_without_wait.json", root / "graphs" / "g0" / "001-after_p.json")
    shutil.copy(CHECKS / "ge" / "ok_seed.json", root / "graphs" / "g0" / "002-ge-optimized.json")
    stages = [{"index": i, "name": n, "changed": True, "nodes": 10, "file": f"graphs/g0/{i:03d}-{n}.json"}
              for i, n in enumerate(["aot-inference", "after_p", "ge-optimized"])]
    stages[2]["dialect"] = "ge"
    index = {"mode": mode, "graphs": [{"id": "g0", "kind": "inference", "name": "g0", "stages": stages}]}
    (root / "index.json").write_text(json.dumps(index))
    return root


def test_ledger_checks_last_fx_stage_in_its_mode(tmp_path: Path) -> None:
    r = check(_ledger(tmp_path), "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert {(f["graph"], f["mode"]) for f in doc["findings"]} == {("g0/after_p", "reduce-overhead")}


def test_ledger_stage_option(tmp_path: Path) -> None:
    root = _ledger(tmp_path)
    assert check(root, "--stage", "aot-inference").exit_code == 0
    assert check(root, "--stage", "after_p", "--mode", "max-autotune").exit_code == 0


def _run_cli(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as e:
        run(["check", *map(str, args)])
    return int(e.value.code or 0), capsys.readouterr().err


def test_corrupt_json_exits_2_with_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"nodes": [\n  {"name": "x", "op": }\n]}')
    code, err = _run_cli(capsys, bad)
    assert code == 2
    assert f"{bad}:2:" in err.replace("\n", "")


def test_corrupt_ledger_index_exits_2_with_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = _ledger(tmp_path)
    (root / "index.json").write_text('{"graphs": [\n\n  oops]}')
    code, err = _run_cli(capsys, root)
    assert code == 2
    assert "index.json:3:" in err.replace("\n", "")


def test_wrong_shape_and_missing_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    odd = tmp_path / "odd.json"
    odd.write_text('{"nodes": 5}')
    code, err = _run_cli(capsys, odd)
    assert code == 2 and "odd.json:1" in err.replace("\n", "")
    code, err = _run_cli(capsys, tmp_path / "missing.json")
    assert code == 2 and "missing.json" in err


def test_error_findings_exit_1_through_the_console_entry(capsys: pytest.CaptureFixture) -> None:
    code, _ = _run_cli(capsys, CHECKS / "fx" / "unbalanced_scope.json")
    assert code == 1


@pytest.mark.slow
def test_model_script_without_model_exits_2_with_what_was_looked_for(tmp_path: Path, monkeypatch,
                                                                      capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "model.py"
    script.write_text("model = None\n")
    code, err = _run_cli(capsys, script)
    assert code == 2 and "no model and example inputs found" in err


@pytest.mark.slow
def test_model_script_with_pass_file_is_compiled_and_checked(tmp_path: Path, monkeypatch) -> None:
    """The docs' seed plan races in reduce-overhead (add reads abs_1 before the wait) but not in max-autotune."""
    passes = REPO / "passes" / "stream.yaml"
    monkeypatch.chdir(tmp_path)
    seed = REPO / "fixtures" / "models" / "seed.py"
    r = check(seed, "--passes", str(passes), "--mode", "reduce-overhead", "--json")
    assert r.exit_code == 1, r.output
    rules = {f["rule"] for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"}
    assert rules == {"race_cross_stream_without_wait"}
    assert len(list((tmp_path / "airctl-runs").glob("*/index.json"))) == 1  # no --out: ./airctl-runs
    r = check(seed, "--passes", str(passes), "--mode", "max-autotune", "--json", "--out", tmp_path / "mine")
    assert r.exit_code == 0 and json.loads(r.stdout)["errors"] == 0
    assert len(list((tmp_path / "mine").glob("*/index.json"))) == 1  # compiled where --out says
    assert len(list((tmp_path / "airctl-runs").glob("*/index.json"))) == 1


def test_torchair_dump() -> None:
    r = check(DUMPS / "stream" / "optimized.pbtxt", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["errors"] == 0


def test_corrupt_dump_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.pbtxt"
    bad.write_text('node {\n  name: "x"\n  op: \n')
    code, err = _run_cli(capsys, bad)
    assert code == 2 and "bad.pbtxt" in err


def test_torchair_py_dump_is_read_not_compiled() -> None:
    r = check(DUMPS / "stream" / "optimized.py", "--json")
    assert r.exit_code == 0, r.output


def test_valid_json_of_the_wrong_shape_or_depth_exits_2_not_a_traceback(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture) -> None:
    graph = json.loads((CHECKS / "fx" / "unbalanced_scope.json").read_text())
    graph["nodes"][1]["inputs"] = [5]
    typed = tmp_path / "types.json"
    typed.write_text(json.dumps(graph))
    code, err = _run_cli(capsys, typed)
    assert code == 2 and "wrong type" in err
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    code, err = _run_cli(capsys, deep)
    assert code == 2 and "nesting too deep" in err


def test_ledger_stage_file_outside_the_ledger_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = _ledger(tmp_path)
    index = json.loads((root / "index.json").read_text())
    index["graphs"][0]["stages"][1]["file"] = "../../outside.json"
    shutil.copy(CHECKS / "ok" / "seed_clean.json", tmp_path / "outside.json")
    (root / "index.json").write_text(json.dumps(index))
    code, err = _run_cli(capsys, root)
    assert code == 2 and "outside the ledger" in err


def test_the_r8_hint_is_the_fix_for_the_mode_checked() -> None:
    """Issue 32 (6): moving the wait cleans max-autotune but races in reduce-overhead; the hint says so."""
    r = check(CHECKS / "fx" / "wait_on_const.json", "--mode", "max-autotune")
    hint = r.stdout.split("hint:", 1)[1]
    assert "GE already orders" in hint and "reduce-overhead" in hint and "race" in hint

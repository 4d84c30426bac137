"""``airctl diff`` in-process: JSON report, colours, ledgers, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.errors import GraphReadError
from tests.cli.test_dump import make_ledger
from tests.io.dumps import DUMPS, FX_AFTER, FX_BEFORE

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(build_app(), list(args))


def test_json_report_for_the_stream_pass() -> None:
    result = invoke("diff", str(DUMPS / "plain" / "optimized.pbtxt"), str(DUMPS / "stream" / "optimized.txt"),
                    "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["added"] == [] and data["removed"] == []
    assert [c["name"] for c in data["changed"]] == ["MatMul", "Abs"]
    assert data["edges_added"] == [{"src": "Abs", "dst": "Sub", "kind": "control"}]
    assert data["edges_removed"] == []


def test_terminal_output_is_coloured(coloured_stdout: None) -> None:
    result = runner.invoke(build_app(), ["diff", str(FX_BEFORE), str(FX_AFTER)], color=True)
    assert result.exit_code == 0, result.output
    text = result.stdout
    green, yellow, end = "\x1b[32m", "\x1b[33m", "\x1b[0m"
    assert f"{green}+ wait_default  air.wait.default{end}" in text
    assert f"{green}+ edge record_default → wait_default  (sync){end}" in text
    assert f"{yellow}~ mm  aten.mm.default{end}" in text


def test_ledger_from_to(tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path / "run")
    result = invoke("diff", str(ledger), "--from", "aot", "--to", "after-pre-pass", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {n["op"] for n in data["added"]} == {"air.scope_enter.default", "air.record.default",
                                                 "air.scope_exit.default", "air.wait.default"}
    default = json.loads(invoke("diff", str(ledger), "--json").stdout)  # first -> last
    assert default["summary"] == data["summary"]


def test_identical_inputs_exit_zero() -> None:
    result = invoke("diff", str(DUMPS / "stream" / "original.pbtxt"), str(DUMPS / "stream" / "original.txt"))
    assert result.exit_code == 0
    assert "no structural differences" in result.stdout


def test_unreadable_input_is_exit_code_2(tmp_path: Path) -> None:
    bad = tmp_path / "b.txt"
    bad.write_bytes(b"\x00\x01binary")
    result = invoke("diff", str(bad), str(FX_AFTER))
    assert result.exit_code == int(GraphReadError.exit_code) == 2
    assert result.stderr.startswith(f"{bad}:1") and "error:" in result.stderr


def test_one_file_without_ledger_is_a_usage_error() -> None:
    result = invoke("diff", str(FX_AFTER))
    assert result.exit_code == 2
    assert "error: diff needs two graphs, or one ledger folder" in result.stderr and "hint:" in result.stderr


def test_unwritable_output_path_is_a_usage_error_and_files_come_before_stdout(tmp_path: Path, capsys) -> None:
    import pytest

    from airctl.cli.main import run

    with pytest.raises(SystemExit) as e:
        run(["diff", str(FX_BEFORE), str(FX_AFTER), "--html", str(tmp_path / "missing" / "d.html")])
    assert e.value.code == 2
    assert "d.html" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        run(["dump", str(FX_AFTER), "--type", "svg", "-o", str(tmp_path / "missing" / "g.svg")])
    assert e.value.code == 2 and "does not exist" in capsys.readouterr().err


def test_ledger_default_is_first_aot_stage_to_fx_final(tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path / "run")
    index = json.loads((ledger / "index.json").read_text())
    stages = index["graphs"][0]["stages"]
    stages[0]["name"], stages[1]["name"] = "aot-inference", "fx-final"
    ge = dict(stages[1], index=2, name="ge-optimized", file="graphs/g0/002-ge.json")
    from airctl.io.read import read_graph, write_graph

    ge_graph = read_graph(DUMPS / "stream" / "optimized.pbtxt")
    (ledger / "graphs" / "g0" / "002-ge.json").write_text(write_graph(ge_graph, "json"))
    dynamo = dict(stages[1], index=-1, name="dynamo")  # the graph after the passes: a wrong default would show it
    index["graphs"][0]["stages"] = [dynamo, *stages, ge]
    (ledger / "index.json").write_text(json.dumps(index))
    data = json.loads(invoke("diff", str(ledger), "--json").stdout)
    assert sorted(n["op"] for n in data["added"]) == sorted(["air.scope_enter.default", "air.record.default",
                                                             "air.scope_exit.default", "air.wait.default"])


@pytest.mark.slow
def test_plain_diff_of_a_run_is_the_users_passes_with_torchairs_apart(compile_fixture) -> None:
    """Issue 32 (6): before the first YAML pass -> after the last; view_to_reshape listed apart."""
    result = compile_fixture("transformer", "max-autotune", "passes/transformer_two_streams.yaml")
    r = invoke("diff", str(result.ledger_dir), "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    window = data["user_passes"]
    assert window["to"].startswith("yaml:") and "view_to_reshape" in window["torchair_outside"]
    changed_ops = {c["op"] for c in data["changed"]} | {n["op"] for n in data["added"]}
    assert "aten.reshape.default" not in changed_ops  # TorchAir's view -> reshape is not the user's
    run = result.ledger_dir.name
    assert data["a"]["name"] == f"{run}:{window['graph']}/{window['from']}"  # the header names run and stage
    text = invoke("diff", str(result.ledger_dir)).stdout
    assert text.startswith("your passes (") and "not in this diff: " in text and "view_to_reshape" in text


@pytest.mark.slow
def test_two_model_scripts_are_compiled_into_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model script A or B is compiled first, into the runs folder ``--out`` names (was ./airctl-runs)."""
    models = Path(__file__).resolve().parents[2] / "fixtures" / "models"
    monkeypatch.chdir(tmp_path)
    result = invoke("diff", str(models / "seed.py"), str(models / "seed.py"), "--out", str(tmp_path / "mine"),
                    "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["summary"]["added"] == 0
    assert len(list((tmp_path / "mine").glob("*/index.json"))) == 2
    assert not (tmp_path / "airctl-runs").exists()


def test_ops_that_differ_only_in_torchairs_name_bookkeeping_are_counted_apart() -> None:
    """ge-original -> ge-optimized: TorchAir names every op's inputs and outputs in attributes; the diff
    lists them (exact) and says how many changes are that alone."""
    result = invoke("diff", str(DUMPS / "stream" / "original.txt"), str(DUMPS / "stream" / "optimized.txt"))
    assert result.exit_code == 0, result.output
    assert "7 of the 7 changed ops differ only in TorchAir's names of their inputs and outputs" in result.stdout
    assert "attr _input_name_key: None → ['x']" in result.stdout
    other = invoke("diff", str(FX_BEFORE), str(FX_AFTER))
    assert "differ only in TorchAir's names" not in other.stdout

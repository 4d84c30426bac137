"""``airctl dump`` in-process: formats, ledger stages, and the errors users meet."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.errors import GraphReadError, ModelScriptError
from airctl.io.read import parse_graph, read_graph
from tests.conftest import REPO
from tests.io.dumps import DUMPS, FX_AFTER, FX_BEFORE

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(build_app(), list(args))


def make_ledger(root: Path) -> Path:
    (root / "graphs" / "g0").mkdir(parents=True)
    shutil.copy(FX_BEFORE, root / "graphs" / "g0" / "000-aot.json")
    shutil.copy(FX_AFTER, root / "graphs" / "g0" / "001-after-pre-pass.json")
    stages = [{"index": 0, "name": "aot", "changed": None, "nodes": 6, "file": "graphs/g0/000-aot.json",
               "text": None, "seconds": 0.1},
              {"index": 1, "name": "after-pre-pass", "changed": True, "nodes": 10,
               "file": "graphs/g0/001-after-pre-pass.json", "text": None, "seconds": 0.1}]
    (root / "index.json").write_text(json.dumps({"graphs": [{"id": "g0", "kind": "inference", "name": "graph_1",
                                                             "stages": stages}]}))
    return root


def test_json_has_streams_and_control_edges() -> None:
    result = invoke("dump", str(DUMPS / "stream" / "optimized.pbtxt"), "--type", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    nodes = {n["name"]: n for n in data["nodes"]}
    assert nodes["MatMul"]["stream"] == "stream_1" and nodes["Sub"]["control_inputs"] == ["Abs"]
    for key in ("name", "op", "stream", "inputs", "control_inputs", "attrs", "source"):
        assert key in nodes["Abs"]
    assert {"src": "Abs", "dst": "Sub", "kind": "control"} in data["edges"]


@pytest.mark.parametrize("fmt", ["pbtxt", "txt", "json"])
def test_text_formats_round_trip_through_the_cli(fmt: str) -> None:
    src = DUMPS / "stream" / "original.txt"
    result = invoke("dump", str(src), "--type", fmt)
    assert result.exit_code == 0, result.output
    assert parse_graph(result.stdout, fmt, "stdout") == read_graph(src)


def test_fx_listing_and_output_file(tmp_path: Path) -> None:
    out = tmp_path / "g.txt"
    result = invoke("dump", str(DUMPS / "stream" / "optimized.txt"), "--type", "fx", "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "Sub = Sub(arg0_1:0, MatMul:0, ^Abs)" in text
    assert "MatMul = MatMul(arg0_1:0, arg0_1:0, None)  # stream=stream_1" in text


def test_ledger_stage_default_is_last_and_by_name(tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path / "run")
    last = json.loads(invoke("dump", str(ledger)).stdout)
    assert any(n["op"] == "air.wait.default" for n in last["nodes"])
    first = json.loads(invoke("dump", str(ledger), "--stage", "aot").stdout)
    assert not any(n["op"].startswith("air.") for n in first["nodes"])
    result = invoke("dump", str(ledger), "--stage", "nope")
    assert result.exit_code == 2 and "hint:" in result.stderr and "0 aot, 1 after-pre-pass" in result.stderr


def test_model_script_without_inputs_gets_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "model.py"
    script.write_text("import torch\n\ndef get_model():\n    return torch.nn.Linear(2, 2)\n")
    result = invoke("dump", str(script))
    assert result.exit_code == int(ModelScriptError.exit_code) == 2, result.output
    assert "error:" in result.stderr and "get_inputs()" in result.stderr
    assert (tmp_path / "airctl-runs").is_dir(), "the failed compile keeps its ledger"


@pytest.mark.slow
def test_model_script_is_compiled_first(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    seed = Path(__file__).resolve().parents[2] / "fixtures" / "models" / "seed.py"
    result = invoke("dump", str(seed), "--type", "json")
    assert result.exit_code == 0, result.output
    graph = json.loads(result.stdout)
    assert {n["op"] for n in graph["nodes"]} >= {"Data", "MatMul", "Abs", "Sub", "NetOutput"}


def test_py_dump_is_read_not_refused() -> None:
    result = invoke("dump", str(DUMPS / "stream" / "optimized.py"), "--type", "fx")
    assert result.exit_code == 0 and "MatMul = MatMul(" in result.stdout


def test_malformed_input_is_a_graph_read_error_with_exit_code_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pbtxt"
    bad.write_text('node {\n    name: "a"\n    op: "X"\n')
    result = invoke("dump", str(bad))
    assert result.exit_code == int(GraphReadError.exit_code) == 2
    assert result.stderr.startswith(f"{bad}:4:") and ": error: " in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("fmt", ["dot", "svg", "html"])
def test_pictures_go_to_a_file_and_stdout_stays_empty(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"g.{fmt}"
    result = invoke("dump", str(DUMPS / "stream" / "optimized.txt"), "--type", fmt, "-o", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and f"wrote {out}" in result.stderr
    assert out.stat().st_size > 100


def test_picture_without_out_is_named_after_the_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("dump", str(DUMPS / "stream" / "optimized.txt"), "--type", "dot")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "optimized.dot").read_text().startswith("digraph")


def test_dump_of_files_does_not_import_torch(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import sys; from airctl.cli.main import run\n"
            "try:\n    run(['dump', sys.argv[1], '--type', 'txt'])\nexcept SystemExit:\n    pass\n"
            "assert 'torch' not in sys.modules, 'torch imported'\n")
    proc = subprocess.run([sys.executable, "-c", code, str(DUMPS / "stream" / "optimized.pbtxt")],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr


def test_stage_by_negative_index_and_files_outside_the_ledger_refused(tmp_path: Path) -> None:
    root = make_ledger(tmp_path / "run")
    last = invoke("dump", str(root), "--stage", "-1", "--type", "json")
    first = invoke("dump", str(root), "--stage", "-2", "--type", "json")
    assert last.exit_code == 0 and first.exit_code == 0
    assert len(json.loads(last.stdout)["nodes"]) == 10 and len(json.loads(first.stdout)["nodes"]) == 6
    missing = invoke("dump", str(root), "--stage", "7")
    assert missing.exit_code == 2 and "0 aot, 1 after-pre-pass" in missing.stderr
    index = json.loads((root / "index.json").read_text())
    index["graphs"][0]["stages"][0]["file"] = "../../../etc/passwd"
    (root / "index.json").write_text(json.dumps(index))
    escaped = invoke("dump", str(root), "--stage", "aot")
    assert escaped.exit_code == 2 and "outside the ledger" in escaped.stderr


def test_outputs_never_overwrite_inputs_or_ledgers_but_overwrite_ordinary_files(tmp_path: Path) -> None:
    from airctl.ledger.writer import LedgerWriter

    ledger = LedgerWriter.create(tmp_path / "runs", "m", command="compile").root
    source = tmp_path / "g.json"
    source.write_text((REPO / "fixtures" / "dumps" / "fx_after.json").read_text())
    before = (ledger / "index.json").read_text()
    r = invoke("dump", str(source), "--type", "json", "-o", str(ledger / "index.json"))
    assert r.exit_code == 2 and "inside the ledger" in r.stderr
    assert (ledger / "index.json").read_text() == before
    r = invoke("dump", str(source), "--type", "json", "-o", str(source))
    assert r.exit_code == 2 and "an input of this command" in r.stderr
    r = invoke("diff", str(source), str(source), "--html", str(source))
    assert r.exit_code == 2 and "an input of this command" in r.stderr and json.loads(source.read_text())
    out = tmp_path / "out.json"
    assert invoke("dump", str(source), "--type", "json", "-o", str(out)).exit_code == 0
    r = invoke("dump", str(source), "--type", "fx", "-o", str(out))  # again, as users loop: overwritten
    assert r.exit_code == 0, r.stderr
    assert out.read_text().startswith("# graph")
    assert invoke("dump", str(source), "--type", "fx", "-o", str(out), "--force").exit_code == 0

"""``airctl run`` in-process: the script's environment, exit codes, tracebacks, the ledger.

Scripts that set process-global GE options or TorchAir's log level run in subprocesses
(tests/run/); the ones here compile with TorchAir's defaults, so they can share the process.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import airctl
from airctl.cli.app import build_app
from airctl.ledger.reader import Ledger

SCRIPTS = Path(__file__).resolve().parents[2] / "fixtures" / "scripts"
runner = CliRunner()


def run(*args: str, cwd: Path | None = None):  # noqa: ANN201
    import os

    previous = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return runner.invoke(build_app(), ["run", *map(str, args)])
    finally:
        os.chdir(previous)


def only_ledger(out: Path) -> Path:
    ledgers = [p for p in out.iterdir() if (p / "index.json").is_file()]
    assert len(ledgers) == 1, ledgers
    return ledgers[0]


def test_script_runs_as_python_would_run_it(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    r = run("--out", out, "--backend", "sim", SCRIPTS / "script_env.py", "a", "--out", "x", "--exit", "0",
            cwd=tmp_path)
    assert r.exit_code == 0, r.output
    env = json.loads(r.stdout.strip().splitlines()[-1])
    # everything after the script is the script's, airctl's own --out included
    assert env["argv"] == [str(SCRIPTS / "script_env.py"), "a", "--out", "x", "--exit", "0"]
    assert env["name"] == "__main__"
    assert env["path0"] == str(SCRIPTS)
    assert env["cwd"] == str(tmp_path)
    assert env["file"] == str(SCRIPTS / "script_env.py")
    assert only_ledger(out)


def test_sys_exit_code_is_airctls_exit_code(tmp_path: Path) -> None:
    r = run("--out", tmp_path, "--backend", "sim", SCRIPTS / "script_env.py", "--exit", "3")
    assert r.exit_code == 3
    index = json.loads((only_ledger(tmp_path) / "index.json").read_text())
    assert index["status"] == "failed" and index["script"] == {"exit_code": 3}
    assert "exited with code 3" in index["error"]


@pytest.mark.slow
def test_exception_shows_the_scripts_traceback_and_ledger_keeps_the_graph(tmp_path: Path) -> None:
    r = run("--out", tmp_path, "--backend", "sim", SCRIPTS / "raises.py")
    assert r.exit_code == 1
    tb = r.stderr[r.stderr.rindex("Traceback (most recent call last):"):]  # the script's, printed last
    frames = [line for line in tb.splitlines() if line.startswith("  File ")]
    assert frames, r.stderr[-3000:]
    assert frames[0].startswith(f'  File "{SCRIPTS / "raises.py"}", line 14, in <module>')
    assert 'in check_result' in frames[-1]
    assert tb.rstrip().endswith("ValueError: result rejected by the script")
    package = str(Path(airctl.__file__).parent) + "/"  # not the word: a clone may sit in a folder named airctl
    assert package not in "\n".join(frames), "airctl's own frames must not show"

    ledger = Ledger.open(only_ledger(tmp_path))
    index = ledger.index
    assert index.status == "failed"
    assert index.error == "ValueError: result rejected by the script"
    assert index.error_detail["exit_code"] == 1
    assert "raises.py" in index.error_detail["traceback"]
    # what ran before the failure is captured: the graph, its stages, the execution check
    stages = [s.name for s in index.graphs[0].stages]
    assert stages[:2] == ["dynamo", "aot-inference"] and "ge-optimized" in stages
    assert index.graphs[0].execution["matches_eager"] is True


@pytest.mark.slow
def test_torchair_config_errors_are_torchairs_own(tmp_path: Path) -> None:
    r = run("--out", tmp_path, "--backend", "sim", SCRIPTS / "bad_config.py")
    assert r.exit_code == 1
    assert f'File "{SCRIPTS / "bad_config.py"}", line 6, in <module>' in r.stderr
    assert "ValueError: Value 'max_autotune' (type: <class 'str'>) not in optional list" in r.stderr


def test_missing_script_is_a_usage_error(tmp_path: Path) -> None:
    r = run("--out", tmp_path, "--backend", "sim", tmp_path / "nope.py")
    assert r.exit_code == 2
    index = json.loads((only_ledger(tmp_path) / "index.json").read_text())
    assert index["status"] == "failed" and "script not found" in index["error"]


@pytest.mark.slow
def test_record_wait_max_autotune_captures_every_stage_and_checks_outputs(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    r = run("--out", out, "--backend", "sim", SCRIPTS / "record_wait.py", "max-autotune", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    index = Ledger.open(only_ledger(out)).index
    assert index.command == "run" and index.mode == "max-autotune" and index.status == "ok"
    (graph,) = index.graphs
    stages = [s.name for s in graph.stages]
    assert stages[0] == "dynamo" and stages[1] == "aot-inference"
    assert {"fx-final", "ge-original", "ge-optimized", "after:view_to_reshape"} <= set(stages)
    assert graph.execution["checked"] and graph.execution["matches_eager"]
    assert index.execution["graphs_checked"] == 1
    # TorchAir wrote its dumps where the script asked; the ledger has (compressed) copies and the source
    written = sorted(p.name + ".gz" for p in (tmp_path / "graph_dump").iterdir())
    assert sorted(d.file.split("/", 1)[1] for d in index.dumps) == written
    assert all(Path(d.source).parent == tmp_path / "graph_dump" for d in index.dumps)
    assert index.compilers == [{"via": "get_npu_backend", "mode": "max-autotune",
                                   "graph_dump": {"type": "pbtxt", "path": str(tmp_path / "graph_dump")}}]
    assert "outputs of 1/1 compiled graphs match eager" in r.stderr


@pytest.mark.slow
def test_npu_wait_tensor_fails_in_reduce_overhead_with_torchairs_message(tmp_path: Path) -> None:
    r = run("--out", tmp_path, "--backend", "sim", SCRIPTS / "stream_switch_wait_tensor.py", "reduce-overhead")
    assert r.exit_code == 1
    assert r.stderr.rstrip().endswith(
        "NotImplementedError: torch.ops.air.wait_tensor kernel_impl is not implemented! "
        "npu_wait_tensor is not support in this mode.")
    index = Ledger.open(only_ledger(tmp_path)).index
    assert index.status == "failed"
    assert index.compilers[0]["run_eagerly_set_by_airctl"] is True
    assert "npu_wait_tensor is not support in this mode" in index.error_detail["message"]


@pytest.mark.slow
def test_npu_device_streams_backend_string_and_scope_attributes(tmp_path: Path) -> None:
    from airctl.io.read import read_graph

    out = tmp_path / "runs"
    r = run("--out", out, "--backend", "sim", SCRIPTS / "npu_api_tour.py", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    index = Ledger.open(only_ledger(out)).index
    # the get_npu_backend graph and the backend="npu" graph are both captured and checked
    assert len(index.graphs) == 2
    assert all(g.execution["matches_eager"] for g in index.graphs)
    assert [c["via"] for c in index.compilers] == ["get_npu_backend", "get_npu_backend"]
    (dump,) = (tmp_path / "graph_dump").glob("dynamo_original_graph_*.pbtxt")
    attrs = {n.op: n.attrs for n in read_graph(dump).nodes}
    assert attrs["MatMul"]["_op_aicore_num"] == "4" and attrs["MatMul"]["_super_kernel_scope"] == "sk"
    assert attrs["Abs"]["_op_exec_never_timeout"] is True and "_super_kernel_scope" not in attrs["Abs"]


@pytest.mark.slow
def test_bare_compiler_graphs_are_captured_from_aot_on(tmp_path: Path) -> None:
    r = run("--out", tmp_path, "--backend", "sim", SCRIPTS / "bare_compiler.py")
    assert r.exit_code == 0, r.output
    index = Ledger.open(only_ledger(tmp_path)).index
    assert index.compilers == [{"via": "get_compiler", "mode": "max-autotune"}]
    (graph,) = index.graphs
    stages = [s.name for s in graph.stages]
    assert graph.id == "1-inference" and stages[0] == "aot-inference" and "ge-optimized" in stages
    assert index.execution is None  # no Dynamo graph seen, so no eager reference


def test_json_is_the_runs_index_and_the_scripts_output_goes_to_stderr(tmp_path: Path) -> None:
    """``run --json``: stdout holds index.json alone (a CI step reads it with jq); what the script prints,
    its own JSON line here, is on stderr, and the exit code is still the script's."""
    out = tmp_path / "runs"
    r = run("--out", out, "--backend", "sim", "--json", SCRIPTS / "script_env.py", "--exit", "0", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    index = json.loads(r.stdout)
    assert index["run_id"] == only_ledger(out).name and index["status"] == "ok"
    assert '"argv"' in r.stderr  # the script's print
    failed = run("--out", out, "--backend", "sim", "--json", SCRIPTS / "script_env.py", "--exit", "3", cwd=tmp_path)
    assert failed.exit_code == 3 and json.loads(failed.stdout)["status"] == "failed"

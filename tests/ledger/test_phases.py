"""``airctl show --phases``: the command's time line from the ledger (airctl.ledger.phases)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from airctl.ledger.index import RunIndex
from airctl.ledger.phases import phase_table

REPO = Path(__file__).resolve().parents[2]


def _index() -> RunIndex:
    stage = lambda i, name, elapsed: {"index": i, "name": name, "file": f"g/{i}.json", "elapsed": elapsed}  # noqa: E731
    return RunIndex.from_json({
        "run_id": "r", "command": "compile",
        "timings": {"startup_seconds": 0.5, "backend_seconds": 2.0, "load_seconds": 0.1, "eager_seconds": 0.2,
                    "compile_and_run_seconds": 1.5, "total_seconds": 4.0},
        "timing_ends": {"backend_seconds": 2.05, "load_seconds": 2.15, "eager_seconds": 2.4,
                        "compile_and_run_seconds": 3.9},
        "graphs": [{"id": "1-inference", "stages": [
            stage(0, "dynamo", 2.9), stage(1, "aot-inference", 3.0), stage(2, "yaml:mine", 3.1),
            stage(3, "after:optimize_noop_ops", 3.15), stage(4, "fx-final", 3.15), stage(5, "ge-original", 3.4),
            stage(6, "ge-optimized", 3.5)]}]})


def test_every_interval_is_named_and_the_rest_is_unattributed() -> None:
    table = phase_table(_index())
    rows = {r["phase"]: r["seconds"] for r in table["rows"]}
    assert rows == {
        "start-up: interpreter, airctl's imports, arguments": 0.5,
        "backend: torch, TorchAir and the NPU stand-in imported": 2.0, "load the model script": 0.1,
        "eager reference run": 0.2,
        "Dynamo trace (frame of graph 1-inference)": 0.5,  # from the compile's start (2.4) to the graph
        "AOT autograd (inference)": 0.1, "user pass mine": 0.1, "TorchAir FX pass optimize_noop_ops": 0.05,
        "TorchAir FX passes end (fx-final)": 0.0, "FX->GE conversion": 0.25,
        "GE optimization (TorchAir's GE passes end)": 0.1,
        "compile 1-inference: GE compile / capture, warm-up and first run": 0.4,
        "finish: verdicts, log, report.html": 0.1}
    # 0.05 s before the backend started and 0.05 s between backend and load: unattributed
    assert table["wall_seconds"] == 4.5 and table["unattributed_seconds"] == pytest.approx(0.1, abs=1e-6)
    assert table["share"] == pytest.approx(4.4 / 4.5, abs=1e-4)


def test_an_older_ledger_without_timing_ends_attributes_only_startup_and_says_so() -> None:
    data = _index().to_json()
    data.pop("timing_ends")
    table = phase_table(RunIndex.from_json(data))
    assert table["recorded"] is False and [r["phase"] for r in table["rows"]] == [
        "start-up: interpreter, airctl's imports, arguments"]


SCRIPT = '''
import torch
import torch_npu  # noqa: F401
import torchair

backend = torchair.get_npu_backend(compiler_config=torchair.CompilerConfig())
f = torch.compile(lambda x: torch.mm(x, x) + 1, backend=backend, dynamic=False)
g = torch.compile(lambda x: torch.relu(x) * 2, backend=backend, dynamic=False)
x = torch.randn(8, 8).npu()
print(f(x).shape, g(x).shape, f(torch.randn(4, 4).npu()).shape)
'''


@pytest.mark.slow
# `passes apply` compiles with a pass file and its phases are read by the same table as compile's: a sweep (--sweeps)
@pytest.mark.parametrize("command", ["compile", pytest.param("apply", marks=pytest.mark.sweep), "run"])
def test_95_percent_of_the_wall_time_is_attributed(tmp_path: Path, command: str) -> None:
    out = tmp_path / "runs"
    airctl = [sys.executable, "-m", "airctl"]
    args = {"compile": ["compile", str(REPO / "fixtures/models/graph_break.py")],
            "apply": ["passes", "apply", str(REPO / "passes/two_chains.yaml"),
                      "--model", str(REPO / "fixtures/models/two_chains.py")],
            "run": ["run", "--out", str(out), str(tmp_path / "script.py")]}[command]
    (tmp_path / "script.py").write_text(SCRIPT)
    env = {**os.environ, "AIRCTL_WARM": "0"}
    t0 = time.perf_counter()
    if command != "run":  # run: what follows the script is the script's
        args += ["--out", str(out)]
    done = subprocess.run([*airctl, *args], env=env, capture_output=True, text=True, cwd=tmp_path)
    wall = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr[-2000:]
    shown = subprocess.run([*airctl, "show", "--phases", "--json", "--out", str(out)], env=env,
                           capture_output=True, text=True, cwd=tmp_path)
    table = json.loads(shown.stdout)
    graphs = {r["phase"] for r in table["rows"] if r["phase"].startswith("Dynamo trace")}
    print(f"{command}: {table['share']:.1%} of {table['wall_seconds']} s attributed (ledger); "
          f"{table['attributed_seconds'] / wall:.1%} of {wall:.2f} s measured outside")
    assert table["share"] >= 0.95
    assert table["attributed_seconds"] / wall >= 0.95  # of the command's wall time, its exit included
    assert len(graphs) >= (2 if command != "apply" else 1)



def test_only_a_processs_first_ledger_has_the_start_up_taken_when_the_command_began(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that writes several ledgers (profile's rounds, bisect's steps, suggest's check) started
    up once, before its own code: a later ledger's start-up was the process's whole age (8 s of a 0.6 s
    round), and suggest's check, its first ledger, counted its search as start-up. A forked process (a
    rank, a warm command) has its own."""
    from airctl.ledger import liveness, writer

    monkeypatch.setattr(liveness, "_STARTUP", {})
    monkeypatch.setattr(liveness, "_RECORDED", set())
    monkeypatch.setattr(liveness, "process_age", lambda: 2.0)
    liveness.command_begins()
    monkeypatch.setattr(liveness, "process_age", lambda: 9.0)  # the command's own work since
    first = writer.LedgerWriter.create(tmp_path, "a")
    second = writer.LedgerWriter.create(tmp_path, "b")
    assert first.run_index.timings["startup_seconds"] == 2.0 and first.run_index.timings["before_run_seconds"] == 7.0
    assert "startup_seconds" not in second.run_index.timings and "before_run_seconds" not in second.run_index.timings
    monkeypatch.setattr(liveness.os, "getpid", lambda: -7)  # a forked rank: its age is its start-up
    assert writer.LedgerWriter.create(tmp_path, "rank").run_index.timings["startup_seconds"] == 9.0

"""``--json``: stdout holds exactly one JSON document, whatever else the command says (on stderr), errors
included. The shell runs see what CliRunner cannot: output written below Python's ``sys.stdout``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from tests.warm_process import Child, WarmProcess, start

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "fixtures" / "models" / "seed.py"
runner = CliRunner()


def shell(warm_process: WarmProcess, *args: object, cwd: Path) -> Child:
    """``python -m airctl ARGS`` as a shell runs it (forked from the warm process,
    tests/warm_process.py), to its end."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    logs = cwd.parent / f"{cwd.name}-stdio"
    logs.mkdir(exist_ok=True)
    child = start(warm_process, list(args), cwd, env, logs)
    child.wait(600)
    return child


@pytest.mark.slow
def test_compile_json_is_the_ledgers_index_and_nothing_else(tmp_path: Path, warm_process: WarmProcess) -> None:
    proc = shell(warm_process, "compile", SEED, "--backend", "sim", "--json", "--out", tmp_path / "runs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (ledger,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    assert json.loads(proc.stdout) == json.loads((ledger / "index.json").read_text())


def test_failed_compile_json_still_prints_the_index_and_the_error_goes_to_stderr(tmp_path: Path) -> None:
    r = runner.invoke(build_app(), ["compile", str(REPO / "fixtures" / "bad" / "no_entry.py"), "--backend", "sim",
                                    "--json", "--out", str(tmp_path)])
    assert r.exit_code == 2
    index = json.loads(r.stdout)
    assert index["status"] == "failed" and "no model and example inputs found" in index["error"]
    assert "error: no model and example inputs found" in r.stderr


def test_profile_json_is_the_summary_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.cli.test_profile import _fake_run
    from tests.profile.timelines import seed_two_streams

    _fake_run(tmp_path, monkeypatch, lambda req: [seed_two_streams()])
    r = runner.invoke(build_app(), ["profile", str(SEED), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert {"streams", "overlap_s", "critical_path", "races"} <= set(data)
    assert data["meta"]["model"] == str(SEED)

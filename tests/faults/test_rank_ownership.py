"""Issue 47, item 7: the multi-rank launcher owns everything under it, and ends as a signal says.

SIGKILL to ``airctl compile --nproc 2`` left the fork server, both rank clients and both ranks
running; SIGTERM ended it 2 (the bad-input code) with status ``failed``; ``--nproc 1000`` was
accepted on 2 cores. Now every descendant dies with its parent (``PR_SET_PDEATHSIG``), a launcher
that starts kills the ranks a killed one left (:func:`airctl.pipeline.ranks.orphans.sweep_leftovers`),
SIGTERM/SIGHUP end it 143/129 ``terminated``, and ``--nproc`` is bounded
(:func:`airctl.limits.nproc_limit`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.ledger.liveness import process_record
from airctl.limits import nproc_limit
from airctl.pipeline.ranks.orphans import sweep_leftovers
from tests.conftest import REPO

SLEEPY = """import time, torch
def get_model():
    time.sleep(600)
    return torch.nn.Linear(2, 2)
def get_inputs():
    return (torch.randn(2, 2),)
"""


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rpartition(")")[2].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        kids = _children(todo.pop())
        out += kids
        todo += kids
    return out


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def start_two_ranks(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """``airctl compile --nproc 2`` of a model whose ranks sleep in get_model(); once both ranks
    have their ledgers, the launcher and every process under it."""
    (tmp_path / "sleepy.py").write_text(SLEEPY)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "airctl", "compile", "sleepy.py", "--nproc", "2", "--out", "runs"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 240
    while len(list((tmp_path / "runs").glob("*/ranks/*/index.json"))) < 2:
        assert time.monotonic() < deadline and proc.poll() is None, "the ranks did not start"
        time.sleep(0.2)
    time.sleep(1.0)  # the ranks are in get_model()
    return proc, descendants(proc.pid)


def stop_all(pids: list[int]) -> None:
    for pid in pids:
        if running(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_sigkill_to_the_launcher_leaves_no_process_behind(tmp_path: Path) -> None:
    proc, under = start_two_ranks(tmp_path)
    try:
        assert len(under) >= 3, under  # the fork server, the rank clients, the ranks
        proc.kill()
        proc.wait(30)
        deadline = time.monotonic() + 10
        while [p for p in under if running(p)] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in under if running(p)], "left running after the launcher was killed"
    finally:
        stop_all(under)


@pytest.mark.slow
# SIGHUP takes SIGTERM's path (only the name and the code differ; tests/cli/test_boundary.py ends a process
# 129 by it): its case is a sweep (--sweeps)
@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143),
                                          pytest.param(signal.SIGHUP, 129, marks=pytest.mark.sweep)])
def test_sigterm_or_sighup_to_the_launcher_ends_it_terminated(tmp_path: Path, signum: int, code: int) -> None:
    proc, under = start_two_ranks(tmp_path)
    try:
        proc.send_signal(signum)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == code, out.decode(errors="replace")[-3000:]
        (top,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
        assert json.loads((top / "index.json").read_text())["status"] == "terminated"
        time.sleep(1.0)
        assert not [p for p in under if running(p)]
    finally:
        stop_all(under)


def test_nproc_beyond_the_machine_is_refused_before_anything_starts(tmp_path: Path) -> None:
    too_many = nproc_limit() + 1
    r = CliRunner().invoke(build_app(), ["compile", str(REPO / "fixtures" / "models" / "seed.py"), "--nproc",
                                         str(too_many), "--out", str(tmp_path / "runs")])
    assert r.exit_code == 2 and f"invalid --nproc {too_many}: at most {nproc_limit()} ranks" in r.stderr, r.output
    assert not (tmp_path / "runs").exists()


def test_a_launcher_that_starts_kills_the_ranks_a_killed_one_left(tmp_path: Path) -> None:
    """A top ledger left `running` by a launcher that is gone, a rank ledger whose process still runs."""
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        top = tmp_path / "runs" / "20260101-000000-x-0001"
        (top / "ranks" / "0").mkdir(parents=True)
        (top / "index.json").write_text(json.dumps({"status": "running", "process": {**process_record(),
                                                                                      "pid": gone.pid}}))
        record = {**process_record(), "pid": orphan.pid}
        with open(f"/proc/{orphan.pid}/stat") as f:
            record["start_ticks"] = int(f.read().rpartition(")")[2].split()[19])
        (top / "ranks" / "0" / "index.json").write_text(json.dumps({"status": "running", "process": record}))
        assert sweep_leftovers(tmp_path / "runs") == [orphan.pid]
        assert orphan.wait(10) == -signal.SIGKILL
        assert sweep_leftovers(tmp_path / "runs") == []  # nothing twice
    finally:
        orphan.kill()

"""tests/zygote_connect.py: a shell script's ``$AIRCTL`` forked from the zygote behaves as a process of its own."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import MODELS, REPO
from tests.zygote import Zygote

pytestmark = pytest.mark.slow


def _shell(zygote: Zygote, script: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "AIRCTL": zygote.shell_command(), "AIRCTL_OUT": str(cwd / "runs"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen(["bash", "-c", script], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def test_the_callers_stdio_folder_and_exit_code_are_the_commands(tmp_path: Path, zygote: Zygote) -> None:
    (tmp_path / "runs").mkdir()
    proc = _shell(zygote, 'exec $AIRCTL runs --json; echo "not reached"', tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert json.loads(out)["runs"] == [] and "not reached" not in out
    proc = _shell(zygote, "$AIRCTL compile missing.py; echo exit=$?", tmp_path)
    out, err = proc.communicate(timeout=120)
    assert out.strip().endswith("exit=2") and "missing.py" in err, (out, err)


def test_a_signal_to_the_caller_reaches_the_command(tmp_path: Path, zygote: Zygote) -> None:
    proc = _shell(zygote, f"exec $AIRCTL compile {MODELS / 'ends' / 'slow.py'}", tmp_path)
    deadline = time.monotonic() + 60
    while not list((tmp_path / "runs").glob("*/index.json")):  # the run has begun
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    (index,) = [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("*/index.json")]
    assert index["status"] == "interrupted"


def test_a_caller_that_sends_no_request_is_closed_on_and_the_zygote_goes_on(tmp_path: Path, zygote: Zygote) -> None:
    """Every test process of the session asks the same zygote: one bad caller must not stop it."""
    garbage = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    garbage.settimeout(30)
    garbage.connect(zygote.socket)
    garbage.sendall(b"not a request\n")
    assert garbage.recv(1) == b""  # closed on it
    garbage.close()
    child = zygote.start(["runs", "--json"], tmp_path, {**os.environ, "AIRCTL_OUT": str(tmp_path / "runs")}, tmp_path)
    assert child is not None and child.finish(60).returncode == 0, child and child.stderr
    assert json.loads(child.stdout)["runs"] == []


def test_a_child_that_unwinds_through_the_zygotes_loop_leaves_it_serving(tmp_path: Path, zygote: Zygote) -> None:
    """A forked child that ends by an exception (here its folder is gone before it can enter it; an
    interrupt before airctl arms is another) unwinds through the zygote's own frames: the zygote's
    clean-up there must not run in the child."""
    child = zygote.start(["runs", "--json"], tmp_path / "gone", dict(os.environ), tmp_path)
    assert child is not None and child.finish(60).returncode == 1
    assert "FileNotFoundError" in child.stderr
    child = zygote.start(["runs", "--json"], tmp_path, {**os.environ, "AIRCTL_OUT": str(tmp_path / "runs")}, tmp_path)
    assert child is not None and child.finish(60).returncode == 0, child and child.stderr

"""A shell script's ``$AIRCTL`` run through the product's client (airctl/pipeline/warm/client.py, as
torchrun runs it for a rank) and forked from the warm process behaves as a process of its own; the
warm process survives bad callers and children that end by an exception."""

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
from tests.warm_process import WarmProcess

pytestmark = pytest.mark.slow


def _shell(warm_process: WarmProcess, script: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "AIRCTL": warm_process.shell_command(), "AIRCTL_OUT": str(cwd / "runs"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen(["bash", "-c", script], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def test_the_callers_stdio_folder_and_exit_code_are_the_commands(tmp_path: Path,
                                                                 warm_process: WarmProcess) -> None:
    (tmp_path / "runs").mkdir()
    proc = _shell(warm_process, 'exec $AIRCTL runs --json; echo "not reached"', tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert json.loads(out)["runs"] == [] and "not reached" not in out
    proc = _shell(warm_process, "$AIRCTL compile missing.py; echo exit=$?", tmp_path)
    out, err = proc.communicate(timeout=120)
    assert out.strip().endswith("exit=2") and "missing.py" in err, (out, err)


def test_a_signal_to_the_caller_reaches_the_command(tmp_path: Path, warm_process: WarmProcess) -> None:
    proc = _shell(warm_process, f"exec $AIRCTL compile {MODELS / 'ends' / 'slow.py'}", tmp_path)
    deadline = time.monotonic() + 60
    while not list((tmp_path / "runs").glob("*/index.json")):  # the run has begun
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    (index,) = [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("*/index.json")]
    assert index["status"] == "interrupted"


def test_a_caller_that_sends_no_request_is_closed_on_and_the_warm_process_goes_on(
        tmp_path: Path, warm_process: WarmProcess) -> None:
    """Every test process of the session asks the same warm process: one bad caller must not stop it."""
    garbage = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    garbage.settimeout(30)
    garbage.connect(warm_process.socket)
    garbage.sendall(b"not a request\n")
    try:
        assert garbage.recv(1) == b""  # closed on it
    except ConnectionResetError:  # closed on it with the request unread
        pass
    garbage.close()
    env = {**os.environ, "AIRCTL_OUT": str(tmp_path / "runs")}
    child = warm_process.start(["runs", "--json"], tmp_path, env, tmp_path)
    assert child is not None and child.finish(60).returncode == 0, child and child.stderr
    assert json.loads(child.stdout)["runs"] == []


def test_a_child_that_ends_by_an_exception_leaves_it_serving(tmp_path: Path,
                                                             warm_process: WarmProcess) -> None:
    """A forked child that ends by an exception (here its folder is gone before it can enter it; an
    interrupt before airctl arms is another) says so where its caller reads and exits 1, as Python
    does; it never returns into the warm process's loop."""
    child = warm_process.start(["runs", "--json"], tmp_path / "gone", dict(os.environ), tmp_path)
    assert child is not None and child.finish(60).returncode == 1
    assert "FileNotFoundError" in child.stderr
    env = {**os.environ, "AIRCTL_OUT": str(tmp_path / "runs")}
    child = warm_process.start(["runs", "--json"], tmp_path, env, tmp_path)
    assert child is not None and child.finish(60).returncode == 0, child and child.stderr

"""The one fork server loop (airctl.pipeline.warm.server) with a program that needs no torch: a child
per request with the caller's stdio, folder, environment, umask and limits; its exit code (or
signal) told to the client; a request from one of its own children refused; the loop ends when idle."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from airctl.pipeline.warm import client

REPO = Path(__file__).resolve().parents[3]

SERVER = '''
import json, os, socket, sys
from airctl.pipeline.warm.server import serve

class Echo:
    """Writes what it was given to its stdout; exits with the code its argv names (or dies of a signal)."""
    def refuse(self, request):
        return "only echo" if request["argv"][:1] != ["echo"] else None
    def cold(self, request):
        return "asked cold" if "cold" in request["argv"] else None
    def run(self, request):
        import resource, signal as s
        if "ask-again" in request["argv"]:
            from airctl.pipeline.warm import client
            print(json.dumps({"again": client.submit(sys.argv[1], ["echo"])}), flush=True)
            return 0
        if "die" in request["argv"]:
            os.kill(os.getpid(), s.SIGTERM)
        umask = os.umask(0)
        print(json.dumps({"argv": request["argv"], "cwd": os.getcwd(), "env": os.environ.get("ECHO"),
                          "umask": umask, "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[0],
                          "sid": os.getsid(0) == os.getpid()}), flush=True)
        return int(request["argv"][1])

listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
listener.listen(8)
print("ready", flush=True)
served = serve(listener, Echo(), idle_s=float(sys.argv[2]))
print(json.dumps({"forked": served.forked, "cold": served.fresh, "refused": served.refused}), flush=True)
'''


@pytest.fixture
def server() -> Iterator[tuple[str, subprocess.Popen]]:
    folder = tempfile.mkdtemp(prefix="airctl-t-")  # short: a socket path holds 108 bytes
    address = os.path.join(folder, "socket")
    proc = subprocess.Popen([sys.executable, "-c", SERVER, address, "3"], cwd=REPO, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield address, proc
    proc.kill()
    proc.wait()
    shutil.rmtree(folder, ignore_errors=True)


def _submit(address: str, argv: list[str], tmp_path: Path, **more: object) -> tuple[object, Path]:
    out = tmp_path / f"out-{time.monotonic_ns()}"
    with open(os.devnull, "rb") as i, open(out, "wb") as o:
        submitted = client.submit(address, argv, str(tmp_path), {**os.environ, "ECHO": "here"},
                                  [i.fileno(), o.fileno(), o.fileno()], **more)
    return submitted, out


def test_a_child_has_the_callers_stdio_folder_environment_umask_and_limits(server, tmp_path: Path) -> None:
    address, _proc = server
    limits = client.limits()
    limits["RLIMIT_FSIZE"] = [1 << 20, 1 << 20]
    submitted, out = _submit(address, ["echo", "3"], tmp_path, rlimits=limits)
    assert isinstance(submitted, client.Submitted), submitted
    assert submitted.wait(30) == 3
    seen = json.loads(out.read_text())
    assert seen == {"argv": ["echo", "3"], "cwd": str(tmp_path), "env": "here", "umask": client._umask(),
                    "fsize": 1 << 20, "sid": True}


def test_the_client_learns_a_signal_a_refusal_or_a_cold_answer(server, tmp_path: Path) -> None:
    address, _proc = server
    submitted, _ = _submit(address, ["echo", "0", "die"], tmp_path)
    assert isinstance(submitted, client.Submitted) and submitted.wait(30) == -signal.SIGTERM
    assert _submit(address, ["other"], tmp_path)[0] == "only echo"
    assert _submit(address, ["echo", "0", "cold"], tmp_path)[0] == "cold: asked cold"


def test_a_child_asking_its_own_server_is_refused_and_the_loop_ends_when_idle(server, tmp_path: Path) -> None:
    address, proc = server
    submitted, out = _submit(address, ["echo", "0", "ask-again"], tmp_path)
    assert isinstance(submitted, client.Submitted) and submitted.wait(30) == 0
    assert "did not answer" in json.loads(out.read_text())["again"] or "went away" in out.read_text()
    assert proc.wait(30) == 0  # 3 s without a request
    assert proc.stdout is not None
    assert json.loads(proc.stdout.read()) == {"forked": 1, "cold": 0, "refused": 1}

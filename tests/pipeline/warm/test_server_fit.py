"""The fork server's loop, reproductions of issue 63 (4, 9) and 62 (17), with a program that needs no torch.

- 63.4: a warm command ran with the affinity and nice level of the process that started the warm
  process, not its caller's (``taskset``, ``nice`` ignored);
- 63.9: one same-user client sending its request slowly stalled every other command (60 s+);
- 62.17: SIGTERM to the warm process (``doctor --stop-warm``) while a command ran left the command
  running, orphaned, and its caller exited 1 ("went away"); now the command is ended (SIGTERM) and
  its caller told so.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
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
import json, os, signal, socket, sys, time
from airctl.pipeline.warm.server import serve

class Where:
    """Prints the CPUs and nice level it runs with; ``sleep`` sleeps (it ends by a signal)."""
    def refuse(self, request):
        return None
    def cold(self, request):
        return None
    def run(self, request):
        if "sleep" in request["argv"]:
            print(json.dumps({"pid": os.getpid()}), flush=True)
            time.sleep(600)
        print(json.dumps({"cpus": sorted(os.sched_getaffinity(0)), "nice": os.getpriority(os.PRIO_PROCESS, 0)}),
              flush=True)
        return 0

stop_r, stop_w = os.pipe()
signal.signal(signal.SIGTERM, lambda *_: os.write(stop_w, b"t"))
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
listener.listen(8)
print("ready", flush=True)
served = serve(listener, Where(), idle_s=60.0, stop=stop_r, grace_s=5.0)
print(json.dumps({"forked": served.forked, "refused": served.refused}), flush=True)
'''


@pytest.fixture
def server() -> Iterator[tuple[str, subprocess.Popen]]:
    folder = tempfile.mkdtemp(prefix="airctl-t-")
    address = os.path.join(folder, "socket")
    proc = subprocess.Popen([sys.executable, "-c", SERVER, address], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield address, proc
    proc.kill()
    proc.wait()
    shutil.rmtree(folder, ignore_errors=True)


def _submit(address: str, argv: list[str], tmp_path: Path) -> tuple[object, Path]:
    out = tmp_path / f"out-{time.monotonic_ns()}"
    with open(os.devnull, "rb") as i, open(out, "wb") as o:
        submitted = client.submit(address, argv, str(tmp_path), dict(os.environ), [i.fileno(), o.fileno(), o.fileno()])
    return submitted, out


def test_the_child_runs_on_the_callers_cpus_and_nice_level(server, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    address, _ = server
    here = client.placement()
    cpus = sorted(os.sched_getaffinity(0))[:1]
    monkeypatch.setattr(client, "placement", lambda: {**here, "affinity": cpus, "nice": int(here["nice"]) + 3})
    submitted, out = _submit(address, ["where"], tmp_path)
    assert isinstance(submitted, client.Submitted), submitted
    assert submitted.wait(30) == 0
    assert json.loads(out.read_text()) == {"cpus": cpus, "nice": int(here["nice"]) + 3}


def test_a_caller_the_child_cannot_stand_for_runs_cold(server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    address, _ = server
    here = client.placement()
    for change, why in (({"affinity": [*here["affinity"], 4096]}, "CPUs"),  # type: ignore[list-item]
                        ({"nice": int(here["nice"]) - 1}, "nice level")):
        monkeypatch.setattr(client, "placement", lambda change=change: {**here, **change})
        answer, _ = _submit(address, ["where"], tmp_path)
        assert isinstance(answer, str) and answer.startswith("cold:") and why in answer, answer


def test_a_slow_client_holds_no_other_command_up(server, tmp_path: Path) -> None:
    address, _ = server
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    slow.connect(address)
    socket.send_fds(slow, [struct.pack("!I", 1000)], [0, 1, 2])
    slow.sendall(b'{"argv": ')  # ... and the rest never comes
    started = time.monotonic()
    submitted, _ = _submit(address, ["where"], tmp_path)
    assert isinstance(submitted, client.Submitted), submitted
    assert submitted.wait(30) == 0
    assert time.monotonic() - started < 5.0
    slow.close()


def test_sigterm_to_the_server_ends_its_commands_and_tells_their_callers(server, tmp_path: Path) -> None:
    address, proc = server
    submitted, out = _submit(address, ["sleep"], tmp_path)
    assert isinstance(submitted, client.Submitted), submitted
    deadline = time.monotonic() + 30
    while not out.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child = json.loads(out.read_text())["pid"]
    proc.send_signal(signal.SIGTERM)
    assert submitted.wait(30) == -signal.SIGTERM  # told how it ended, not "went away"
    assert proc.wait(30) == 0
    assert not Path(f"/proc/{child}").exists() or Path(f"/proc/{child}/cmdline").read_bytes() == b""


def _cgroups(root: Path, v2: dict[str, dict[str, str]]) -> Path:
    (root / "cgroup.controllers").parent.mkdir(parents=True, exist_ok=True)
    (root / "cgroup.controllers").write_text("memory cpu pids\n")
    for folder, files in v2.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (root / folder / name).write_text(text + "\n")
    return root


def test_cgroup_limits_are_the_tightest_along_the_chain(tmp_path: Path) -> None:
    from airctl.pipeline.warm.fit import cgroup_limits

    root = _cgroups(tmp_path / "v2", {"user.slice": {"memory.max": "8589934592", "cpu.max": "max 100000"},
                                      "user.slice/a.scope": {"memory.max": "max", "cpu.max": "200000 100000",
                                                             "pids.max": "512"},
                                      "user.slice/b.scope": {"memory.max": "max", "cpu.max": "max 100000"}})
    assert cgroup_limits("0::/user.slice/a.scope\n", root) == (8589934592.0, 2.0, 512.0)
    assert cgroup_limits("0::/user.slice/b.scope\n", root) == (8589934592.0, float("inf"), float("inf"))
    v1 = tmp_path / "v1"
    (v1 / "memory" / "job").mkdir(parents=True)
    (v1 / "memory" / "job" / "memory.limit_in_bytes").write_text("1073741824\n")
    (v1 / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # none
    assert cgroup_limits("4:memory:/job\n0::/\n", v1) == (1073741824.0, float("inf"), float("inf"))


def test_a_caller_in_a_cgroup_with_other_limits_runs_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    from airctl.pipeline.warm import fit

    class Any:
        def refuse(self, request):  # noqa: ANN001, ANN202
            return None

        def cold(self, request):  # noqa: ANN001, ANN202
            return None

    limits = {"0::/mine\n": (1e9, 2.0, 100.0), "0::/limited\n": (5e8, 2.0, 100.0), "0::/same\n": (1e9, 2.0, 100.0)}
    monkeypatch.setattr(fit, "cgroup", lambda: "0::/mine\n")
    monkeypatch.setattr(fit, "cgroup_limits", lambda text, root=None: limits[text])
    assert "cgroup sets other limits" in fit.decide(Any(), {"cgroup": "0::/limited\n"})["fresh"]
    assert fit.decide(Any(), {"cgroup": "0::/same\n"}) is None  # another terminal's scope, the same limits

"""The pieces of forked ranks (airctl.pipeline.ranks.forks) that need no torch: the warm client's
contract with torchrun and the server (airctl.pipeline.warm), and what a rank server refuses.
The forked ranks themselves run
end to end in tests/run/test_multirank.py and tests/run/test_lifecycle.py."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from airctl.pipeline.ranks import forks
from airctl.pipeline.ranks.rank_start import RankStart
from airctl.pipeline.target import Target
from airctl.pipeline.warm import server
from airctl.pipeline.warm.intake import Pending


@pytest.fixture
def address() -> Iterator[str]:
    folder = tempfile.mkdtemp(prefix="airctl-t-")  # short: a socket path holds 108 bytes
    yield os.path.join(folder, "socket")
    shutil.rmtree(folder, ignore_errors=True)


def serve_once(address: str, handle) -> tuple[threading.Thread, dict]:  # noqa: ANN001 - a callable
    """A stand-in server: accepts one client, reads its request and descriptors, then ``handle``."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(1)
    seen: dict = {}

    def run() -> None:
        conn, _ = listener.accept()
        head, fds, _, _ = socket.recv_fds(conn, 4, 3)
        (size,) = struct.unpack("!I", head)
        body = b""
        while len(body) < size:
            body += conn.recv(size - len(body))
        seen.update(json.loads(body), fds=len(fds))
        os.write(fds[1], b"written by the rank\n")
        for fd in fds:
            os.close(fd)
        handle(conn, seen)
        conn.close()
        listener.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, seen


def client_argv(address: str, ledger: str = "/some/ledger") -> list[str]:
    """The rank client's command line, as torchrun runs it (forks.Forks.worker_argv)."""
    return [sys.executable, "-I", "-S", str(forks.CLIENT), address, ledger]


def test_the_client_imports_the_standard_library_only() -> None:
    """torchrun runs the client as a file (``python -I -S``): an import of airctl anywhere in it, even
    inside a function on a rare path (a rank that died of a signal), fails there and only there."""
    import ast

    tree = ast.parse(forks.CLIENT.read_text(encoding="utf-8"))
    modules = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names}
    modules |= {node.module.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module and not node.level}
    assert modules - {"__future__"} <= set(sys.stdlib_module_names), sorted(modules)


def client(address: str, cwd: Path, out: Path) -> subprocess.Popen:
    with open(out, "wb") as stdout:
        return subprocess.Popen(client_argv(address), cwd=cwd,
                                env={**os.environ, "RANK": "1"}, stdin=subprocess.DEVNULL, stdout=stdout,
                                start_new_session=True)


def test_the_client_hands_over_its_streams_and_forwards_signals_and_dies_as_its_rank_did(
        address: str, tmp_path: Path) -> None:
    rank = subprocess.Popen(["sleep", "60"], start_new_session=True)  # stands for the forked rank

    def handle(conn: socket.socket, seen: dict) -> None:
        conn.sendall(json.dumps({"pid": rank.pid}).encode() + b"\n")
        code = rank.wait(30)  # until the client's forwarded SIGTERM ends it
        conn.sendall(json.dumps({"exit": code}).encode() + b"\n")

    thread, seen = serve_once(address, handle)
    proc = client(address, tmp_path, tmp_path / "out.txt")
    deadline = time.monotonic() + 30
    while "argv" not in seen and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)  # the client has the rank's pid by now (or forwards the signal once it has)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == -signal.SIGTERM  # killed by the signal its rank died of
    thread.join(10)
    assert seen["argv"] == ["/some/ledger"] and seen["cwd"] == str(tmp_path) and seen["env"]["RANK"] == "1"
    assert seen["fds"] == 3
    assert (tmp_path / "out.txt").read_text() == "written by the rank\n"
    assert rank.returncode == -signal.SIGTERM


def test_the_client_exits_with_its_ranks_code_and_says_when_the_server_went_away(address: str,
                                                                                  tmp_path: Path) -> None:
    thread, _ = serve_once(address, lambda conn, seen: conn.sendall(b'{"pid": 1}\n{"exit": 3}\n'))
    assert client(address, tmp_path, tmp_path / "out.txt").wait(30) == 3
    thread.join(10)
    thread, _ = serve_once(address + "2", lambda conn, seen: conn.sendall(b'{"pid": 1}\n'))
    proc = subprocess.run(client_argv(address + "2"), capture_output=True, text=True, timeout=30)
    thread.join(10)
    assert proc.returncode == 1 and "the warm process went away before the command ended" in proc.stderr
    gone = subprocess.run(client_argv(address + "-none", "/x"), capture_output=True, text=True, timeout=30)
    assert gone.returncode == 1 and "did not answer" in gone.stderr


def admit(conn: socket.socket) -> int | None:
    """Read the request on ``conn`` and answer it as the server's loop does (a rank server of
    /the/ledger): the child's pid, or None (refused: the client was told why, or dropped)."""
    waiting = Pending(conn)
    try:
        while (request := waiting.feed()) is None:
            if not select.select([conn], [], [], 10)[0]:
                raise ValueError("no whole request in time")
    except ValueError:
        waiting.close()
        return None
    return server.answer(conn, waiting.fds, RankStart("/the/ledger"), request, server.Served())


@pytest.mark.parametrize("argv, fds", [(["/another/ledger"], 3), (["/the/ledger", "--more"], 3),
                                       (["/the/ledger"], 2)])
def test_the_server_forks_nothing_but_its_own_runs_ranks(argv: list[str], fds: int) -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    body = json.dumps({"argv": argv, "cwd": "/", "env": {}}).encode()
    socket.send_fds(theirs, [struct.pack("!I", len(body))], [0, 1, 2][:fds])
    theirs.sendall(body)
    assert admit(ours) is None
    answer = theirs.recv(4096).decode()
    if fds == 3:
        assert "forks only its ranks" in answer and "/the/ledger" in answer
    else:
        assert "three descriptors" in answer
    ours.close()
    theirs.close()


def test_the_server_drops_a_request_too_large_or_cut_short() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    socket.send_fds(theirs, [struct.pack("!I", server.MAX_REQUEST + 1)], [0, 1, 2])
    assert admit(ours) is None
    ours.close()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    socket.send_fds(theirs, [struct.pack("!I", 100)], [0, 1, 2])
    theirs.sendall(b'{"argv": ')
    theirs.close()
    assert admit(ours) is None


def test_ranks_start_fresh_when_forking_is_switched_off_or_unsafe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(forks.ENV, "0")
    assert forks.unusable("sim") == f"{forks.ENV}=0"
    assert forks.start(Path("/the/ledger"), "sim") == (None, f"fresh interpreters ({forks.ENV}=0)")
    monkeypatch.delenv(forks.ENV)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        why = forks.unusable("sim")
    finally:
        stop.set()
        thread.join()
    assert why is not None and "other thread(s): a fork would copy locks they hold" in why


def test_a_rank_forked_where_the_server_runs_threads_becomes_a_fresh_interpreter(tmp_path: Path) -> None:
    """The server's warm-up left threads (whose locks a forked copy could find held): the rank execs
    ``python -u -m airctl.pipeline.ranks.worker LEDGER`` with the client's folder and environment."""
    repo = Path(__file__).resolve().parents[2]
    code = ("import os, sys, threading\nfrom airctl.pipeline.ranks.rank_start import RankStart\n"
            "threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
            "os.environ.update(RANK='0', WORLD_SIZE='1')\nos.chdir(sys.argv[1])\n"
            "RankStart(sys.argv[2]).run({})\nprint('not replaced')")
    env = {**os.environ, "PYTHONPATH": str(repo)}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path), str(tmp_path / "ledger")], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    assert "not replaced" not in proc.stdout
    # the worker ran: it looked for what to do where the launcher writes it, and said so as Python does
    assert proc.returncode == 1 and str(tmp_path / "ledger" / "ranks" / "request.json") in proc.stderr, proc.stderr


def test_a_warmed_process_chooses_its_backend_for_the_reasons_a_fresh_one_would(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import airctl.backends as backends
    from airctl.sim.registry import REGISTRY

    monkeypatch.setattr(backends, "_CHOSEN_COLD", {})
    monkeypatch.setattr(REGISTRY, "torchair", None)  # a process that has not loaded TorchAir,
    monkeypatch.setattr(backends.SimBackend, "warm", lambda self: setattr(REGISTRY, "torchair", object()))  # then has
    cold_auto, cold_sim = backends.choose("auto"), backends.choose("sim")
    warmed = backends.warm("auto")
    assert warmed is not None and warmed.forkable
    # asked again after the warm-up (by a forked rank): the answers of a process that had not loaded it
    assert (backends.choose("auto").reason, backends.choose("sim").reason) == (cold_auto.reason, cold_sim.reason)
    assert backends.choose("sim") is not backends.choose("sim")  # one instance per run


@pytest.mark.parametrize("command", ["compile", "profile"])
def test_a_ranks_compile_asks_for_the_backend_the_user_asked_for(monkeypatch: pytest.MonkeyPatch,
                                                                   command: str) -> None:
    """Not the name it resolved to: with no --backend, each rank said "backend sim: requested with
    --backend sim" where the launcher said why auto picked sim."""
    import torch.distributed as dist

    import airctl.pipeline.compile.compiler as compiler
    import airctl.pipeline.profile as profile
    from airctl.pipeline.ranks import worker

    asked: list[str] = []

    def record(req: object, progress: object = None) -> object:
        asked.append(req.target.backend)  # type: ignore[attr-defined]
        raise SystemExit(0)

    monkeypatch.setattr(dist, "init_process_group", lambda *a, **k: None)
    monkeypatch.setattr(compiler, "compile_model", record)
    monkeypatch.setattr(profile, "profile_model", record)
    request = worker.RankRequest(command=command, target=Target(Path("model.py")))
    with pytest.raises(SystemExit):
        worker._compile(request, None, lambda _msg: None)
    assert asked == ["auto"]

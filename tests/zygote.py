"""``python -m airctl`` in a fresh process without paying torch's and TorchAir's import each time.

A spawned ``airctl`` spends most of its life importing: about 8 of a 10 s ``airctl compile`` of a
small model on a quiet 2-core machine is torch, typer and TorchAir (``backend_seconds`` in its
ledger). Tests that need a process of their own (signals sent to it, process-global TorchAir
options and log levels a script sets, exit codes as a shell sees them) but are not about those
imports start it here: a warm parent (the zygote, ``python -m tests.zygote``) imports torch, the
CLI and TorchAir under sim's stand-ins once, as :func:`airctl.sim.session.load_torchair` does
in every process, and then forks one child per command. The child is a process of its own (its
own session and process group, cwd, environment, stdio files), runs ``airctl/__main__.py`` as
``python -m airctl`` would, and ends as Python ends (``SystemExit``, an uncaught interrupt,
``os._exit``). What it cannot show is the import phase itself: moments inside the imports, and
environment variables read at import time (``TORCH_COMPILE_DEBUG``), go to a real fresh process
(:func:`start` decides; the signal sweeps in tests/run/test_lifecycle.py keep both).

A shell script that runs ``$AIRCTL`` (a reproducer's run.sh) gets the same fork through
tests/zygote_connect.py, on the socket the zygote listens on (:meth:`Zygote.shell_command`).

The parent forks only from its main thread and only while it has no other thread (checked).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import runpy
import select
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# variables torch, Dynamo or Inductor read when they are imported: a command given another value
# than the zygote's needs a process that imports them again
IMPORT_TIME_PREFIXES = ("TORCH", "PYTORCH", "TORCHINDUCTOR", "TORCHDYNAMO")
IMPORT_TIME_EXEMPT = {
    "TORCH_DEVICE_BACKEND_AUTOLOAD",  # read by ``import torch`` only; airctl sets it itself
    "TORCHINDUCTOR_CACHE_DIR",  # read when the cache is first used, and then set by torch itself in the test process
}


def _send(channel, message: dict) -> None:  # noqa: ANN001 - a text file
    channel.write(json.dumps(message) + "\n")
    channel.flush()


def serve() -> None:
    """The zygote: import once, then one forked ``python -m airctl`` per request line on stdin, and
    per caller of tests/zygote_connect.py on the socket its environment names."""
    from airctl.torch_env import ensure_torch_importable

    ensure_torch_importable()
    import torch  # noqa: F401

    import airctl.cli.app  # noqa: F401 - typer, rich and the commands
    from airctl.sim.session import load_torchair
    from tests import zygote_connect

    load_torchair()
    gc.collect()
    gc.freeze()  # what the import built stays out of the children's collections (they would copy every page)
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing else may write into the channel
    listener = zygote_connect.listen(os.environ[zygote_connect.ENV]) if zygote_connect.ENV in os.environ else None
    _send(channel, {"ready": True, "threads": threading.active_count()})
    pending, children, stdin = b"", set(), sys.stdin.fileno()
    callers: dict[int, object] = {}  # pid -> the socket of the tests/zygote_connect.py that asked for it
    while True:
        readable = select.select([stdin] + ([listener] if listener else []), [], [], 0.02)[0]
        if stdin in readable:
            chunk = os.read(stdin, 65536)
            if not chunk:  # the client closed: children already started go on in their own sessions
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                pid = _fork(json.loads(line), channel, [listener, *callers.values()])
                if pid:
                    children.add(pid)
        if listener is not None and listener in readable:
            conn, request = zygote_connect.accept(listener)
            again = imports_again(request["env"], dict(os.environ))
            pid = None if again else _fork(request, channel, [listener, conn, *callers.values()])
            for fd in request["fds"]:
                os.close(fd)
            zygote_connect.tell(conn, {"fresh": again} if again or pid is None else {"pid": pid})
            if pid:
                callers[pid] = conn
            else:
                conn.close()
        while children or callers:  # every child that ended since, in any order: several run at once
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            message = {"exit": pid, "returncode": os.waitstatus_to_exitcode(status)}
            if pid in callers:
                conn = callers.pop(pid)
                zygote_connect.tell(conn, message)
                conn.close()
            else:
                children.discard(pid)
                _send(channel, message)


def _fork(request: dict, channel, sockets: list) -> int | None:  # noqa: ANN001 - a text file
    """One child for ``request``; its pid, or None (the error told instead). A request on stdin is
    answered on the channel; a caller on the socket gets the pid from :func:`serve`."""
    if threading.active_count() != 1:  # a caller on the socket gets a fresh interpreter instead
        if "fds" not in request:
            _send(channel, {"error": f"{threading.active_count()} threads: forking would copy held locks"})
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        channel.close()
        for sock in filter(None, sockets):
            sock.close()
        _child(request)  # ends the process as Python would end it
    if "fds" not in request:
        _send(channel, {"pid": pid})
    return pid


def _child(request: dict) -> None:
    """In the forked child: become ``python -m airctl ARGS`` started with ``request``'s cwd, env and stdio."""
    os.setsid()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if "fds" in request:  # a caller's own stdin, stdout and stderr (tests/zygote_connect.py)
        for fd, theirs in enumerate(request["fds"]):
            os.dup2(theirs, fd)
            os.close(theirs)
    else:
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], os.O_WRONLY | os.O_CREAT),
                                (2, request["stderr"], os.O_WRONLY | os.O_CREAT)):
            os.dup2(os.open(path, flags, 0o644), fd)
    if request.get("fsize") is not None:  # a full disk, as ``ulimit -f`` makes one
        resource.setrlimit(resource.RLIMIT_FSIZE, (request["fsize"], request["fsize"]))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    sys.path[0] = request["cwd"]  # as ``python -m`` puts the current folder first
    sys.argv = [str(REPO / "airctl" / "__main__.py"), *request["args"]]
    runpy.run_module("airctl", run_name="__main__", alter_sys=True)
    raise SystemExit(0)


@dataclass
class Child:
    """A started command: ``pid`` (its own process group), :meth:`wait`, then ``stdout``/``stderr``."""

    pid: int
    zygote: Zygote | None
    proc: subprocess.Popen | None
    out: Path
    err: Path
    returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        """The exit code (negative: the signal that ended it); :class:`subprocess.TimeoutExpired` as Popen."""
        if self.returncode is None:
            if self.proc is not None:
                self.returncode = self.proc.wait(timeout)
            else:
                assert self.zygote is not None
                self.returncode = self.zygote.exit_code(self.pid, timeout)
        return self.returncode

    def finish(self, timeout: float, what: object = "airctl") -> Child:
        """Wait for the end; past ``timeout`` s, kill its process group and fail naming ``what``."""
        try:
            self.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.pid, signal.SIGKILL)
            self.wait()
            raise AssertionError(f"{what} still running after {timeout} s") from None
        return self

    @property
    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.err.read_text(errors="replace")


class Zygote:
    """The client side: starts ``python -m tests.zygote`` and asks it for children (several may run at once)."""

    def __init__(self) -> None:
        from tests import zygote_connect

        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        self.env = env
        self.folder = tempfile.mkdtemp(prefix="airctl-zygote-")  # short: a socket's path has at most 107 bytes
        self.socket = os.path.join(self.folder, "socket")
        env = {**env, zygote_connect.ENV: self.socket}
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.zygote"], cwd=REPO, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buffer = b""
        self.exits: dict[int, int] = {}  # children that ended, not yet waited for
        assert self.receive(300).get("ready"), "the zygote did not start"

    def receive(self, timeout: float | None) -> dict:
        """The zygote's next message; an exit told meanwhile is kept for :meth:`exit_code`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not sel.select(left):
                    raise subprocess.TimeoutExpired("zygote", timeout or 0)
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise RuntimeError(f"the zygote ended (exit {self.proc.wait()})")
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message = json.loads(line)
        if "error" in message:
            raise RuntimeError(f"zygote: {message['error']}")
        if "exit" in message:
            self.exits[int(message["exit"])] = int(message["returncode"])
        return message

    def exit_code(self, pid: int, timeout: float | None) -> int:
        """Child ``pid``'s exit code (negative: the signal that ended it), once it ended."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while pid not in self.exits:
            self.receive(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self.exits.pop(pid)

    def start(self, args: list[str], cwd: Path, env: dict[str, str], logs: Path, fsize: int | None = None) -> Child:
        out, err = logs / f"stdout-{time.monotonic_ns()}.txt", logs / f"stderr-{time.monotonic_ns()}.txt"
        request = {"args": [str(a) for a in args], "cwd": str(cwd), "env": env, "stdout": str(out), "stderr": str(err),
                   "fsize": fsize}
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        while "pid" not in (message := self.receive(60)):
            pass
        return Child(int(message["pid"]), self, None, out, err)

    def shell_command(self) -> str:
        """What a shell script runs as ``airctl`` to have the command forked from here (tests/zygote_connect.py)."""
        return f"{shlex.quote(sys.executable)} -m tests.zygote_connect {shlex.quote(self.socket)}"

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def imports_again(env: dict[str, str], zygote_env: dict[str, str]) -> list[str]:
    """The variables a command's environment sets otherwise than the zygote's and that are read at import."""
    keys = set(env) | set(zygote_env)
    return sorted(k for k in keys if k.startswith(IMPORT_TIME_PREFIXES) and k not in IMPORT_TIME_EXEMPT
                  and env.get(k) != zygote_env.get(k))


def start(zygote: Zygote | None, args: list, cwd: Path, env: dict[str, str], logs: Path, fresh: bool = False,
          fsize: int | None = None) -> Child:
    """``python -m airctl ARGS`` in its own process group: forked from ``zygote``, or a fresh interpreter
    when asked (``fresh``), when there is no zygote, or when ``env`` changes what the imports read;
    ``fsize``: the largest file it may write (``RLIMIT_FSIZE``)."""
    if zygote is not None and not fresh and not imports_again(env, zygote.env):
        return zygote.start(args, cwd, env, logs, fsize)
    out, err = logs / f"stdout-{time.monotonic_ns()}.txt", logs / f"stderr-{time.monotonic_ns()}.txt"

    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen([sys.executable, "-m", "airctl", *map(str, args)], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=o, stderr=e, start_new_session=True,
                                preexec_fn=limit if fsize is not None else None)
    return Child(proc.pid, None, proc, out, err)


if __name__ == "__main__":
    serve()

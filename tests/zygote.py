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

One zygote serves the whole pytest session: the first test process to need it starts it, the
others (xdist workers) find it under a lock in a folder named for the session's controller, and
it ends when that controller does. Every command is asked for on its Unix socket, the caller's
stdin, stdout and stderr passed with the request (``SCM_RIGHTS``): a test (:meth:`Zygote.start`)
and a shell script that runs ``$AIRCTL`` (a reproducer's run.sh, through tests/zygote_connect.py,
:meth:`Zygote.shell_command`) alike. The caller keeps the connection and reads the exit code from it.

The parent forks only from its main thread and only while it has no other thread (checked).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import json
import os
import resource
import runpy
import select
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
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


OWNER = "AIRCTL_TEST_ZYGOTE_OWNER"  # the zygote ends when this process (the session's controller) has


def serve() -> None:
    """The zygote: import once (timed: ``imports`` in its ready line), then one forked ``python -m
    airctl`` per caller on the socket its environment names, until the owner process has ended."""
    t0 = time.perf_counter()
    import airctl.pipeline.compile.compiler  # noqa: F401 - what `airctl compile` imports before its ledger
    from airctl.cli.main import build_app
    from airctl.torch_env import ensure_torch_importable
    from tests import zygote_connect

    build_app()  # typer, rich and every command (no torch: ``airctl --help``)
    cli = time.perf_counter() - t0
    ensure_torch_importable()
    import torch  # noqa: F401

    from airctl.sim.session import load_torchair

    load_torchair()
    imports = {"cli": round(cli, 3), "torch_and_torchair": round(time.perf_counter() - t0 - cli, 3)}
    gc.collect()
    gc.freeze()  # what the import built stays out of the children's collections (they would copy every page)
    path, owner, zygote = os.environ[zygote_connect.ENV], int(os.environ[OWNER]), os.getpid()
    listener = zygote_connect.listen(path)
    with os.fdopen(os.dup(1), "w") as channel:
        _send(channel, {"ready": True, "threads": threading.active_count(), "imports": imports})
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # nothing may write where the starter reads
    os.close(devnull)
    callers: dict[int, object] = {}  # pid -> the connection of the caller that asked for it
    woken, wake = os.pipe()  # a child's end wakes the loop (SIGCHLD), as a caller does
    for fd in (woken, wake):
        os.set_blocking(fd, False)
    signal.set_wakeup_fd(wake)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    for signum in (signal.SIGTERM, signal.SIGHUP):  # ended from outside: its folder goes too
        signal.signal(signum, lambda *_: sys.exit(0))
    gone = _watch(owner)
    try:
        while _alive(owner):
            readable = select.select([listener, woken] + ([gone] if gone is not None else []), [], [], 1.0)[0]
            if gone is not None and gone in readable:
                break
            if woken in readable:
                os.read(woken, 4096)
            if listener in readable:
                _answer(listener, callers, (woken, wake))
            while callers:  # every child that ended since, in any order: several run at once
                pid, status = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
                if pid in callers:
                    conn = callers.pop(pid)
                    zygote_connect.tell(conn, {"exit": pid, "returncode": os.waitstatus_to_exitcode(status)})
                    conn.close()
    finally:  # children still running go on in their own sessions
        if os.getpid() == zygote:  # not a child unwinding through here (SystemExit, an interrupt, an error)
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def _answer(listener, callers: dict, pipe: tuple[int, int]) -> None:  # noqa: ANN001 - a socket
    """One caller: a child forked for it (``{"pid"}``), or ``{"fresh": [...]}`` when its environment
    changes what the imports read, or the child could not be forked: it starts a fresh interpreter
    itself. ``{"ping"}``: ``{"pong"}``. Nothing a caller sends ends the zygote (every test process asks it).
    In the child, only its end (``SystemExit``, an interrupt) leaves :func:`_fork`, and it passes through."""
    from tests import zygote_connect

    try:
        conn, request = zygote_connect.accept(listener)
    except (OSError, ValueError, RecursionError):  # a caller that went away, or a request that was not one
        return
    pid = None
    try:
        if request.get("ping"):
            zygote_connect.tell(conn, {"pong": os.getpid()})
        else:
            again = imports_again(dict(request["env"]), dict(os.environ))
            pid = None if again else _fork(request, [listener, conn, *callers.values()], pipe)
            zygote_connect.tell(conn, {"fresh": again} if pid is None else {"pid": pid})
    except Exception:  # noqa: BLE001 - a fork that failed (memory, process limits), a malformed request
        zygote_connect.tell(conn, {"fresh": []})
    for fd in request["fds"]:
        os.close(fd)
    if pid:
        callers[pid] = conn
    else:
        conn.close()


def _watch(pid: int) -> int | None:
    """A file descriptor that becomes readable when process ``pid`` ends (Linux), so that a pid reused
    after it ended is not taken for it; None where there is none (then :func:`_alive` polls)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _fork(request: dict, sockets: list, pipe: tuple[int, int]) -> int | None:
    """One child for ``request``; its pid, or None where forking would copy locks another thread holds."""
    if threading.active_count() != 1:
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    held = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # until the child has its own handlers
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        raise
    if pid == 0:
        for sock in sockets:
            sock.close()
        signal.set_wakeup_fd(-1)
        for fd in pipe:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        try:
            _child(request)  # ends the process as Python would end it
        except Exception:  # noqa: BLE001 - as Python shows an uncaught error; only the end goes up from here
            sys.excepthook(*sys.exc_info())
            raise SystemExit(1) from None
    signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
    return pid


def _child(request: dict) -> None:
    """In the forked child: become ``python -m airctl ARGS`` started with ``request``'s cwd, env and stdio."""
    os.setsid()
    for fd, theirs in enumerate(request["fds"]):  # the caller's own stdin, stdout and stderr (first: an
        os.dup2(theirs, fd)                       # error from here on is written where the caller reads)
        os.close(theirs)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if request.get("fsize") is not None:  # a full disk, as ``ulimit -f`` makes one
        resource.setrlimit(resource.RLIMIT_FSIZE, (request["fsize"], request["fsize"]))
    sys.path[0] = request["cwd"]  # as ``python -m`` puts the current folder first
    sys.argv = [str(REPO / "airctl" / "__main__.py"), *request["args"]]
    runpy.run_module("airctl", run_name="__main__", alter_sys=True)
    raise SystemExit(0)


@dataclass
class Child:
    """A started command: ``pid`` (its own process group), :meth:`wait`, then ``stdout``/``stderr``.
    Forked by the zygote (``conn``: the connection its exit code comes on) or a fresh interpreter (``proc``)."""

    pid: int
    conn: socket.socket | None
    proc: subprocess.Popen | None
    out: Path
    err: Path
    returncode: int | None = None
    buffer: bytearray = field(default_factory=bytearray)  # read from ``conn`` past the last message

    def wait(self, timeout: float | None = None) -> int:
        """The exit code (negative: the signal that ended it); :class:`subprocess.TimeoutExpired` as Popen."""
        if self.returncode is None:
            if self.proc is not None:
                self.returncode = self.proc.wait(timeout)
            else:
                assert self.conn is not None
                answer = _read_line(self.conn, self.buffer, timeout, f"airctl (pid {self.pid})")
                self.returncode = int(answer["returncode"])
                self.conn.close()
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


def _read_line(conn: socket.socket, buffer: bytearray, timeout: float | None, what: str) -> dict:
    """The next message on a connection to the zygote (one JSON line); what was read past it stays in
    ``buffer``. :class:`subprocess.TimeoutExpired` past ``timeout`` s, and nothing lost."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while b"\n" not in buffer:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not select.select([conn], [], [], left)[0]:
            raise subprocess.TimeoutExpired(what, timeout or 0)
        chunk = conn.recv(65536)
        if not chunk:
            raise RuntimeError(f"the zygote ended before {what} did")
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return json.loads(line)


class Zygote:
    """The session's zygote, as a test process sees it: :meth:`shared` finds or starts it; :meth:`start`
    asks it for a child (several may run at once, from several test processes)."""

    def __init__(self, socket_path: str, env: dict[str, str], imports: dict[str, float],
                 proc: subprocess.Popen | None = None) -> None:
        self.socket = socket_path
        self.env = env  # the variables read at import, as the zygote has them
        self.imports = imports  # seconds: ``cli`` (the CLI's import), ``torch_and_torchair`` (after it)
        self.proc = proc  # set in the test process that started it

    @classmethod
    def shared(cls) -> Zygote:
        """The session's zygote: found in the controller's folder, or started there now (under a lock,
        so that two test processes asking at once start one)."""
        owner = os.getppid() if "PYTEST_XDIST_WORKER" in os.environ else os.getpid()
        folder = _private(Path(tempfile.gettempdir()) / f"airctl-zygote-{os.getuid()}-{owner}")
        known, path = folder / "zygote.json", str(folder / "socket")
        with open(folder / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if known.is_file() and _answers(path):  # not one of an earlier session whose controller had this pid
                found = json.loads(known.read_text())
                return cls(path, found["env"], found["imports"])
            zygote = cls._start(path, owner)
            known.write_text(json.dumps({"env": zygote.env, "imports": zygote.imports}))
            return zygote

    @classmethod
    def _start(cls, socket_path: str, owner: int) -> Zygote:
        from tests import zygote_connect

        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(socket_path)  # a zygote of an earlier session with the same owner pid
        proc = subprocess.Popen([sys.executable, "-m", "tests.zygote"], cwd=REPO,
                                env={**env, zygote_connect.ENV: socket_path, OWNER: str(owner)},
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None
        with proc.stdout:
            line = proc.stdout.readline() if select.select([proc.stdout], [], [], 300)[0] else b""
        if not line:
            proc.kill()
            raise RuntimeError(f"the zygote did not start within 300 s (exit {proc.wait()})")
        ready = json.loads(line)
        assert ready["ready"] and ready["threads"] == 1, ready
        imported = {k: v for k, v in env.items() if k.startswith(IMPORT_TIME_PREFIXES)}
        return cls(socket_path, imported, ready["imports"], proc)

    def start(self, args: list[str], cwd: Path, env: dict[str, str], logs: Path,
              fsize: int | None = None) -> Child | None:
        """``airctl ARGS`` forked with this cwd, env and stdout/stderr files under ``logs``; None where
        the zygote asks for a fresh interpreter instead."""
        out, err = logs / f"stdout-{time.monotonic_ns()}.txt", logs / f"stderr-{time.monotonic_ns()}.txt"
        request = {"args": [str(a) for a in args], "cwd": str(cwd), "env": env, "fsize": fsize}
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(self.socket)
            with open(os.devnull, "rb") as i, open(out, "wb") as o, open(err, "wb") as e:
                socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], [i.fileno(), o.fileno(), e.fileno()])
            buffer = bytearray()
            answer = _read_line(conn, buffer, 60, f"the zygote's answer to {args}")
        except BaseException:
            conn.close()
            raise
        if "pid" not in answer:
            conn.close()
            return None
        return Child(int(answer["pid"]), conn, None, out, err, buffer=buffer)

    def shell_command(self) -> str:
        """What a shell script runs as ``airctl`` to have the command forked from here (tests/zygote_connect.py)."""
        return f"{shlex.quote(sys.executable)} -m tests.zygote_connect {shlex.quote(self.socket)}"


def _private(folder: Path) -> Path:
    """``folder`` made for this user alone (a socket's path has at most 107 bytes: it stays short), and
    refused where someone else's, or a link, is there already."""
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise RuntimeError(f"{folder} is not a folder of this user's alone: remove it")
    return folder


def _answers(path: str) -> bool:
    """Whether a zygote listens at ``path`` (a ping; the zygote's own pid is no proof: it may be a
    zombie, or another process's now)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(30)
        conn.connect(path)
        conn.sendall(json.dumps({"ping": True}).encode() + b"\n")
        return b"pong" in conn.recv(4096)
    except OSError:
        return False
    finally:
        conn.close()


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
        forked = zygote.start(args, cwd, env, logs, fsize)
        if forked is not None:
            return forked
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

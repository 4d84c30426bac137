"""The life of one warm process in a user's folder (:mod:`airctl.pipeline.warm.place`): start, serve, end.

:func:`spawn` starts it in the background, detached (a session of its own, stdin and stdout on
``/dev/null``, stderr into ``<key>.log``); it outlives the command that started it. :func:`live`
is what the process itself runs:

1. It takes ``<key>.lock`` (another process holding it serves this key already: it leaves) and
   checks the key is still the install's.
2. It binds ``<key>.sock`` at once (mode 0600), so that a command started while it warms up waits
   for it rather than paying the whole import again, and writes ``<key>.json`` (``warming``).
3. It warms up (the caller's ``warm_up``: imports); one that says the backend's processes must
   start fresh (``npu``) ends it, leaving ``refused`` and the reason in the state, so that no
   command starts another for the same key.
4. It serves (:func:`airctl.pipeline.warm.server.serve`) until it is idle for ``idle_s``
   (``AIRCTL_WARM_IDLE`` seconds, default :data:`place.IDLE_S`), until its key is no longer the
   install's (checked every few seconds and before each command: a warm process never outlives a
   changed install; one in use starts the new install's warm process as it goes), until a file it
   imported changed (``stale``: :func:`airctl.pipeline.warm.place.first_changed`), until
   ``AIRCTL_WARM_OWNER``'s process ended (the test suite's controller), or until SIGTERM
   (``airctl doctor --stop-warm``). SIGTERM while commands run ends them as it would end them
   cold: each command's process group gets SIGTERM (SIGKILL after :data:`GRACE_S`), each client
   learns how its command ended, and only then does the warm process exit — nothing it ran is left
   orphaned, and a caller's exit agrees with its ledger.
5. It removes its socket and state, and exits.

:func:`stop_all` stops this install's warm processes (``install`` in their state; every install's
with ``every=True``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from airctl.pipeline.warm import place
from airctl.pipeline.warm.server import Program, Served, serve

OWNER_ENV = "AIRCTL_WARM_OWNER"  # a pid: the warm process ends when that process has
GRACE_S = 10.0  # after SIGTERM, how long running commands have to end before SIGKILL


def spawn(module: str, where: Path, key: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """``python -P -m MODULE WHERE KEY`` in the background, detached (see the module)."""
    env = dict(os.environ if env is None else env)
    log = os.open(place.files(where, key)["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        return subprocess.Popen([sys.executable, "-P", "-m", module, str(where), key], cwd="/", env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                                start_new_session=True, close_fds=True)
    finally:
        os.close(log)


def alive(where: Path, key: str) -> bool:
    """Whether a warm process holds key ``key`` in ``where`` (warming up or serving)."""
    try:
        fd = os.open(place.files(where, key)["lock"], os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def stop_all(where: Path, wait_s: float = 5.0, every: bool = False) -> list[dict[str, object]]:
    """End this install's warm processes in the user's folder ``where`` (``every``: every install's)
    with SIGTERM, as its idle exit would end it (a running command ends as terminated, its client
    told so): ``[{key, pid, ended, install}]``; ``[{..., "skipped": True}]`` for another install's left
    running. A process is stopped only when it holds its key's lock and is this user's; nothing else of
    the folder is touched. The next ledger-writing command runs cold and starts a new one."""
    found = place.private(where, make=False)
    if found is None:
        return []
    stopped: list[dict[str, object]] = []
    ours = place.install_id()
    for state_file in sorted(found.glob("*.json")):
        key = state_file.stem
        current = place.state(found, key) or {}
        pid = current.get("pid")
        if not isinstance(pid, int) or pid <= 0 or not alive(found, key) or not _ours(pid):
            continue
        install = str(current.get("install") or f"{current.get('python')}|?")
        if not every and install != ours:
            stopped.append({"key": key, "pid": pid, "ended": False, "install": install, "skipped": True})
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + wait_s + GRACE_S
        while _ours(pid) and time.monotonic() < deadline:  # the process itself, not only its lock
            time.sleep(0.05)
        stopped.append({"key": key, "pid": pid, "ended": not _ours(pid), "install": install})
    return stopped


def _ours(pid: int) -> bool:
    """``pid`` is a process of this user's running airctl's warm process (not a reused pid; an ended
    one waiting to be reaped has no command line)."""
    try:
        owner = os.stat(f"/proc/{pid}").st_uid
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read(4096)
    except OSError:
        return False
    return owner == os.getuid() and b"airctl.cli.warm" in cmdline


def live(where: Path, key: str, program: Program, warm_up: Callable[[], tuple[str | None, dict[str, float]]],
         respawn: str | None = None, stale: Callable[[], str | None] | None = None) -> int:
    """The warm process (see the module); ``warm_up`` imports and says why it cannot serve (None: it
    can), with the seconds each part of it took; ``respawn``: the module to start for a changed
    install's key when this one ends for that reason while in use; ``stale``: what changed since the
    warm-up that it must not serve (None: nothing). Its exit code."""
    os.chdir("/")
    if place.private(where, make=False) is None:
        print(f"airctl warm: {where} is not a private folder of this user's", file=sys.stderr)
        return 1
    paths = place.files(where, key)
    lock = os.open(paths["lock"], os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another serves this key
    if place.key(dict(os.environ)) != key:
        return 0  # the install changed since the spawn
    with contextlib.suppress(FileNotFoundError):
        os.unlink(paths["sock"])  # one of a warm process that ended without removing it
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(paths["sock"]))
    os.chmod(paths["sock"], 0o600)
    listener.listen(64)
    ours = os.stat(paths["sock"]).st_ino
    started = time.time()
    try:
        idle_s = place.idle_seconds()
    except ValueError as e:  # the client checks it first; one started by hand says why and ends
        print(f"airctl warm: {e}", file=sys.stderr)
        listener.close()
        os.unlink(paths["sock"])
        return 2

    def note(status: str, served: Served | None = None, **more: object) -> None:
        counts = {} if served is None else {"forked": served.forked, "cold": served.fresh, "refused": served.refused,
                                            "last_request": served.last}
        place.write_state(where, key, status=status, pid=os.getpid(), key=key, started=started, idle_s=idle_s,
                          python=sys.executable, install=place.install_id(), **counts, **more)

    owner = _owner()
    if owner == -1:
        listener.close()
        os.unlink(paths["sock"])
        return 0
    stop_r, stop_w = os.pipe()  # SIGTERM while serving: the loop ends its commands, then returns
    os.set_blocking(stop_w, False)
    serving = [False]

    def on_term(_signum: int, _frame: object) -> None:
        if not serving[0]:
            sys.exit(0)
        with contextlib.suppress(OSError):
            os.write(stop_w, b"t")

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    # a signal mask survives exec: a console that spawns this while it holds its ending signals
    # (cli/main.py, the end of a cold command) would leave SIGTERM blocked here for good
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
    note("warming")
    try:
        refused, imports = warm_up()
        if refused is not None:
            listener.close()
            note("refused", reason=refused, imports=imports)
            return 0
        note("serving", imports=imports)
        serving[0] = True
        served = serve(listener, program, owner=owner, idle_s=idle_s, stop=stop_r, grace_s=GRACE_S,
                       valid=lambda: place.key(dict(os.environ)) == key and (stale is None or stale() is None),
                       on_request=lambda served: note("serving", served, imports=imports))
        new_key = place.key(dict(os.environ))
        if respawn is not None and new_key != key and time.time() - served.last < idle_s:
            spawn(respawn, where, new_key)  # the changed install's own warm process, for the next command
    finally:
        with contextlib.suppress(OSError):
            if os.stat(paths["sock"]).st_ino == ours:
                os.unlink(paths["sock"])
        mine = place.state(where, key) or {}
        with contextlib.suppress(OSError):
            if mine.get("pid") == os.getpid() and mine.get("status") != "refused":
                paths["json"].unlink()
        if owner is not None:  # a warm process of another process's (the test suite's) leaves nothing behind
            for name in ("log", "lock"):
                with contextlib.suppress(OSError):
                    paths[name].unlink()
            with contextlib.suppress(OSError):
                where.rmdir()
    return 0


def _owner() -> int | None:
    """A pidfd of ``AIRCTL_WARM_OWNER``'s process; None: no owner; -1: the owner is gone already."""
    pid = os.environ.get(OWNER_ENV, "")
    if not pid.isdigit():
        return None
    try:
        return os.pidfd_open(int(pid))
    except OSError:
        return -1

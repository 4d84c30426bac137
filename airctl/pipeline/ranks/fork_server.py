"""The fork server's loop, and each forked rank's start (:mod:`airctl.pipeline.ranks.forks` says why).

The server runs in a child of the launcher, in a session of its own (the terminal's signals reach
the launcher and, through torchrun, the rank clients, never it). It warms the backend, then waits
on one selector for: a client connecting (one rank to fork), a client going away (its rank is
killed: nothing may outlive what torchrun watches), a rank ending (its pidfd; the client is told
the exit status) and the launcher closing its pipe (finish once no rank is left).
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import importlib
import json
import os
import selectors
import signal
import socket
import struct
import threading
from pathlib import Path
from typing import Any

from airctl.pipeline.ranks.orphans import die_with_parent
from airctl.pipeline.ranks.rank_start import close_inherited, run_rank
from airctl.pipeline.run import signals
from airctl.pipeline.run.boundary import flush_std_streams

# what every rank imports after TorchAir: warm too, so that no rank pays for them
RANK_MODULES = ("airctl.pipeline.run.rank", "airctl.ledger.collectives", "airctl.pipeline.compile.compiler",
                "airctl.pipeline.compile.run_script", "airctl.pipeline.profile", "torch.distributed")
MAX_REQUEST = 16 << 20  # an environment and a folder's path; anything larger is not a client of ours


def serve(listener: socket.socket, control: int, top: Path, requested_backend: str) -> int:
    os.setsid()
    signals.forget_after_fork()
    faulthandler.disable()  # the launcher's was aimed at its own ledger's crash file
    close_inherited({listener.fileno(), control, 0, 1, 2})
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    _warm(requested_backend)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, ("listener",))
    sel.register(control, selectors.EVENT_READ, ("control",))
    ranks: dict[int, tuple[socket.socket, int]] = {}  # pid -> (its client's connection, its pidfd)
    finishing = False
    while not finishing or ranks:
        for key, _ in sel.select():
            kind = key.data[0]
            if kind == "listener":
                conn, _addr = listener.accept()
                pid = _admit(conn, top, sel, listener, control)
                if pid is None:
                    conn.close()
                    continue
                pidfd = os.pidfd_open(pid)
                ranks[pid] = (conn, pidfd)
                sel.register(conn, selectors.EVENT_READ, ("client", pid))
                sel.register(pidfd, selectors.EVENT_READ, ("rank", pid))
            elif kind == "control":
                if not os.read(control, 64):  # the launcher is done (or gone): no new ranks
                    sel.unregister(control)
                    os.close(control)
                    finishing = True
            elif kind == "client":
                if not key.fileobj.recv(64):  # type: ignore[union-attr] - its client went away
                    sel.unregister(key.fileobj)
                    _kill(key.data[1])
            else:
                _reap(key.data[1], ranks, sel)
    return 0


def _warm(requested_backend: str) -> None:
    """Import what every rank imports; a failure is left for each rank to meet and report itself."""
    from airctl.backends import warm

    try:
        warm(requested_backend)
        for name in RANK_MODULES:
            importlib.import_module(name)
    except Exception:  # noqa: BLE001, S110 - each rank imports the same and reports the error in its ledger
        pass
    gc.collect()
    gc.freeze()  # the warm heap stays out of the ranks' collections (they would copy every page)


def _admit(conn: socket.socket, top: Path, sel: selectors.BaseSelector, listener: socket.socket,
           control: int) -> int | None:
    """Read a client's request and fork its rank; the rank's pid, or None (the client was told why)."""
    uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[1]
    if uid != os.getuid():
        return None
    try:
        head, fds, _flags, _addr = socket.recv_fds(conn, 4, 3)
        size = struct.unpack("!I", head)[0] if len(head) == 4 else MAX_REQUEST + 1
        request = json.loads(_read(conn, size)) if size <= MAX_REQUEST else None
    except (OSError, ValueError, struct.error):
        return None
    if (len(fds) != 3 or not isinstance(request, dict) or request.get("argv") != [str(top)]
            or not isinstance(request.get("env"), dict) or not isinstance(request.get("cwd"), str)):
        _tell(conn, {"error": f"the fork server of {top} forks only its ranks (python rank_client.py SOCKET {top})"})
        for fd in fds:
            os.close(fd)
        return None
    flush_std_streams()
    warm = threading.active_count() == 1  # else the warm-up left threads: a forked copy could find their locks held
    server = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            die_with_parent(server)  # the server gone (its launcher killed), the rank goes too
            sel.close()
            listener.close()
            code = run_rank(fds, request, str(top), warm)
        finally:
            os._exit(code)
    for fd in fds:
        os.close(fd)
    _tell(conn, {"pid": pid})
    return pid


def _read(conn: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = conn.recv(min(left, 1 << 16))
        if not chunk:
            raise ValueError("the client went away mid-request")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _tell(conn: socket.socket, message: dict[str, Any]) -> None:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
    except OSError:  # the client went away; its rank is killed when that is seen
        pass


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(pid: int, ranks: dict[int, tuple[socket.socket, int]], sel: selectors.BaseSelector) -> None:
    """A rank ended: tell its client how, and forget it."""
    conn, pidfd = ranks.pop(pid)
    _, status = os.waitpid(pid, 0)
    _tell(conn, {"exit": os.waitstatus_to_exitcode(status)})
    sel.unregister(pidfd)
    os.close(pidfd)
    with contextlib.suppress(KeyError):  # still registered unless its client went away first
        sel.unregister(conn)
    conn.close()

"""The fork server's loop: one warm process, one forked child per request, its end told to its client.

Both warm processes of airctl run this loop: the per-user warm process of the console script
(:mod:`airctl.pipeline.warm.daemon`) and a multi-rank run's rank server
(:mod:`airctl.pipeline.ranks.forks`). What differs is the :class:`Program` a child becomes and
when the loop ends. It waits on one selector for:

- a client connecting: its request is read (only this user's processes: the peer's uid is
  checked), then answered ``{"error"}``, ``{"fresh"}`` (the command must run cold: the client does
  so) or ``{"pid"}`` (a child was forked for it: :func:`airctl.pipeline.warm.child.become`);
- a client going away: its child's process group is killed (nothing the server runs outlives
  what the caller watches, as a cold process dies with its terminal's job);
- a child ending (its pidfd): the client is told ``{"exit": code}``, negative for a signal;
- the end: ``control`` closed (the launcher is done), ``owner`` gone (a pidfd), ``idle_s`` without a
  request, or ``valid()`` False (the install changed). The listener closes at once; the loop
  returns when the last child ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import selectors
import signal
import socket
import struct
import time
from collections.abc import Callable
from typing import Any, Protocol

from airctl.pipeline.run.boundary import flush_std_streams

MAX_REQUEST = 16 << 20  # an environment and a folder's path; anything larger is not a client of ours
READ_S = 10.0  # a client that connects and sends nothing is closed on after this long
CHECK_S = 5.0  # how often ``valid()`` is asked while the loop waits


class Program(Protocol):
    """What a forked child becomes, and which requests it takes."""

    def refuse(self, request: dict[str, Any]) -> str | None:
        """Why this request is not one this server runs (answered ``{"error"}``), or None."""

    def cold(self, request: dict[str, Any]) -> str | None:
        """Why this request must run in a fresh interpreter (answered ``{"fresh"}``), or None."""

    def run(self, request: dict[str, Any]) -> int:
        """In the forked child, after :func:`~airctl.pipeline.warm.child.become`: the program; its exit code."""


class Served:
    """What the loop did, for a state file: counts and the last request's moment."""

    def __init__(self) -> None:
        self.forked = self.fresh = self.refused = 0
        self.last = time.time()


def serve(listener: socket.socket, program: Program, *, control: int | None = None, owner: int | None = None,
          idle_s: float | None = None, valid: Callable[[], bool] | None = None,
          on_request: Callable[[Served], None] | None = None) -> Served:
    """Serve until the end (see the module); ``owner``: a pidfd; ``on_request``: called after each answer."""
    served = Served()
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, ("listener",))
    for fd, kind in ((control, "control"), (owner, "owner")):
        if fd is not None:
            sel.register(fd, selectors.EVENT_READ, (kind,))
    children: dict[int, tuple[socket.socket, int]] = {}  # pid -> (its client's connection, its pidfd)
    listening, checked = True, time.monotonic()
    while listening or children:
        timeout = None
        if listening and (idle_s is not None or valid is not None):
            timeout = CHECK_S if idle_s is None else max(0.0, min(CHECK_S, served.last + idle_s - time.time()))
        for key, _ in sel.select(timeout):
            kind = key.data[0]
            if kind == "listener":
                try:
                    conn, _addr = listener.accept()
                except OSError:
                    continue
                pid = admit(conn, program, served)
                if pid is not None:
                    conn, pid = pid
                    pidfd = os.pidfd_open(pid)
                    children[pid] = (conn, pidfd)
                    sel.register(conn, selectors.EVENT_READ, ("client", pid))
                    sel.register(pidfd, selectors.EVENT_READ, ("child", pid))
                if on_request is not None:
                    on_request(served)
            elif kind in ("control", "owner"):
                if kind == "owner" or not os.read(key.fd, 64):  # the launcher is done, or the owner gone
                    sel.unregister(key.fd)
                    listening = _stop(listener, sel, listening)
            elif kind == "client":
                if not key.fileobj.recv(64):  # type: ignore[union-attr] - its client went away
                    sel.unregister(key.fileobj)
                    _kill(key.data[1])
            else:
                _reap(key.data[1], children, sel)
                served.last = time.time()  # idle counts from the last command's end
        if listening and not children:
            if idle_s is not None and time.time() - served.last >= idle_s:
                listening = _stop(listener, sel, listening)
            elif valid is not None and time.monotonic() - checked >= CHECK_S:
                checked = time.monotonic()
                if not valid():
                    listening = _stop(listener, sel, listening)
    sel.close()
    return served


def _stop(listener: socket.socket, sel: selectors.BaseSelector, listening: bool) -> bool:
    if listening:
        sel.unregister(listener)
        listener.close()
    return False


def admit(conn: socket.socket, program: Program, served: Served) -> tuple[socket.socket, int] | None:
    """Read a client's request on ``conn`` and fork its child: (the connection, the child's pid), or
    None (the client was told why, or was not a client of ours: it is closed on)."""
    served.last = time.time()
    peer, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                          struct.calcsize("3i")))
    fds: list[int] = []
    try:
        if uid != os.getuid():
            raise ValueError("another user")
        if _parent(peer) == os.getpid():
            raise ValueError("a command this server runs asks it again")
        conn.settimeout(READ_S)  # a caller that sends nothing must not hold the server up
        head, fds, _flags, _addr = socket.recv_fds(conn, 4, 3)
        size = struct.unpack("!I", head)[0] if len(head) == 4 else MAX_REQUEST + 1
        request = json.loads(_read(conn, size)) if size <= MAX_REQUEST else None
        conn.settimeout(None)
        if (not isinstance(request, dict) or not isinstance(request.get("argv"), list)
                or not isinstance(request.get("env"), dict) or not isinstance(request.get("cwd"), str)):
            raise ValueError("not a request")
    except (OSError, ValueError, struct.error, RecursionError):
        _close(fds)
        conn.close()
        served.refused += 1
        return None
    try:
        answer = _decide(program, request) if len(fds) == 3 else {
            "error": "not a request: three descriptors (stdin, stdout, stderr) come with one"}
        pid = _fork(program, request, fds, conn) if answer is None else None
    except Exception as e:  # noqa: BLE001 - a fork that failed (memory, process limits): the client runs it cold
        answer, pid = {"fresh": f"cold: the warm process could not fork ({e})"}, None
    _close(fds)
    if pid is None:
        served.refused += "error" in (answer or {})
        served.fresh += "fresh" in (answer or {})
        _tell(conn, answer or {"fresh": "cold: the client went away"})
        conn.close()
        return None
    served.forked += 1
    _tell(conn, {"pid": pid})
    return conn, pid


def _decide(program: Program, request: dict[str, Any]) -> dict[str, str] | None:
    """The answer that is not a fork, or None to fork."""
    error = program.refuse(request)
    if error is not None:
        return {"error": error}
    why = program.cold(request) or _limits_out_of_reach(request.get("limits") or {})
    if why is not None:
        return {"fresh": f"cold: {why}"}
    return None


def _limits_out_of_reach(limits: dict[str, list[int]]) -> str | None:
    """A resource limit the caller has and the child could not take (a hard limit above ours)."""
    for name, (_soft, hard) in limits.items():
        which = getattr(resource, str(name), None)
        if which is None:
            continue
        ours = resource.getrlimit(which)[1]
        if ours != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or hard > ours):
            return f"the caller's {name} is above the warm process's"
    return None


def _fork(program: Program, request: dict[str, Any], fds: list[int], conn: socket.socket) -> int | None:
    """Fork the child for ``request`` (None: its client went away before); signals held across the
    fork until the child has a fresh process's handlers."""
    with contextlib.suppress(BlockingIOError):
        if conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
            return None
    flush_std_streams()
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        raise
    if pid == 0:  # the child: never returns into the server's frames
        code = 1  # as Python ends on an uncaught exception
        try:
            from airctl.pipeline.warm.child import become

            become(fds, request, unblock=held)
            code = program.run(request)
        except KeyboardInterrupt as e:  # an interrupt forwarded while it was forked, met as it let signals in
            code = _interrupted(e)
        except BaseException:  # noqa: BLE001 - reported where the caller reads, then the child ends here
            import traceback

            with contextlib.suppress(Exception):
                traceback.print_exc()
        finally:
            os._exit(code)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
    return pid


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _read(conn: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = conn.recv(min(left, 1 << 16))
        if not chunk:
            raise ValueError("the client went away mid-request")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _close(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _tell(conn: socket.socket, message: dict[str, Any]) -> None:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
    except OSError:  # the client went away; its child is killed when that is seen
        pass


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(pid: int, children: dict[int, tuple[socket.socket, int]], sel: selectors.BaseSelector) -> None:
    """A child ended: tell its client how, and forget it."""
    conn, pidfd = children.pop(pid)
    _, status = os.waitpid(pid, 0)
    _tell(conn, {"exit": os.waitstatus_to_exitcode(status)})
    sel.unregister(pidfd)
    os.close(pidfd)
    with contextlib.suppress(KeyError):  # still registered unless its client went away first
        sel.unregister(conn)
    conn.close()


def _interrupted(stop: KeyboardInterrupt) -> int:
    """What a cold process prints and returns for an interrupt before its command began (130, 143, 129)."""
    from airctl.errors import Terminated, interrupt_exit_code

    with contextlib.suppress(OSError, ValueError):
        os.write(2, (f"error: terminated by {stop.name}\n" if isinstance(stop, Terminated)
                     else "error: interrupted\n").encode())
    return interrupt_exit_code(stop)

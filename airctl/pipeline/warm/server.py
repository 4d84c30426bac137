"""The fork server's loop: one warm process, one forked child per request, its end told to its client.

Both warm processes of airctl run this loop: the per-user warm process of the console script
(:mod:`airctl.pipeline.warm.daemon`) and a multi-rank run's rank server
(:mod:`airctl.pipeline.ranks.forks`). What differs is the :class:`Program` a child becomes and
when the loop ends. It waits on one selector for:

- a client connecting: its request is read as it arrives (:mod:`airctl.pipeline.warm.intake`: a
  slow client holds no one up; only this user's processes: the peer's uid is checked), then
  answered ``{"error"}``, ``{"fresh"}`` (the command must run cold: the client does so) or
  ``{"pid"}`` (a child was forked for it: :func:`airctl.pipeline.warm.child.become`);
- a client going away: its child's process group is killed (nothing the server runs outlives
  what the caller watches, as a cold process dies with its terminal's job);
- a child ending (its pidfd): the client is told ``{"exit": code}``, negative for a signal;
- the end: ``control`` closed (the launcher is done), ``owner`` gone (a pidfd), ``idle_s`` without a
  request, or ``valid()`` False (the install changed). The listener closes at once; the loop
  returns when the last child ended;
- ``stop`` readable (the warm process got SIGTERM): the end, and every child's process group gets
  SIGTERM at once, SIGKILL ``grace_s`` later; each client is told how its command ended.

A request is forked only when the child can be the process the caller would have started
(:func:`airctl.pipeline.warm.fit.decide`).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import struct
import time
from collections.abc import Callable
from typing import Any, Protocol

from airctl.ledger.liveness import proc_stat
from airctl.pipeline.run.boundary import flush_std_streams
from airctl.pipeline.warm.fit import decide
from airctl.pipeline.warm.intake import MAX_REQUEST, READ_S, Pending

__all__ = ["MAX_REQUEST", "READ_S", "Program", "Served", "serve"]
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
          on_request: Callable[[Served], None] | None = None, stop: int | None = None,
          grace_s: float = 10.0) -> Served:
    """Serve until the end (see the module); ``owner``: a pidfd; ``on_request``: called after each answer;
    ``stop``: a descriptor whose readability ends the loop and its commands (SIGTERM, then SIGKILL
    after ``grace_s``)."""
    served = Served()
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, ("listener",))
    for fd, kind in ((control, "control"), (owner, "owner"), (stop, "stop")):
        if fd is not None:
            sel.register(fd, selectors.EVENT_READ, (kind,))
    children: dict[int, tuple[socket.socket, int]] = {}  # pid -> (its client's connection, its pidfd)
    pending: dict[socket.socket, Pending] = {}
    listening, checked = True, time.monotonic()
    kill_at: float | None = None  # after a stop: when the children still running get SIGKILL
    while listening or children:
        timeout = None
        if listening and (idle_s is not None or valid is not None):
            timeout = CHECK_S if idle_s is None else max(0.0, min(CHECK_S, served.last + idle_s - time.time()))
        ends = [p.deadline for p in pending.values()] + ([kill_at] if kill_at is not None else [])
        if ends:
            soonest = max(0.0, min(ends) - time.monotonic())
            timeout = soonest if timeout is None else min(timeout, soonest)
        for key, _ in sel.select(timeout):
            kind = key.data[0]
            if kind == "listener":
                try:
                    conn, _addr = listener.accept()
                except OSError:
                    continue
                served.last = time.time()
                if _welcome(conn, served):
                    pending[conn] = Pending(conn)
                    sel.register(conn, selectors.EVENT_READ, ("pending",))
            elif kind == "pending":
                _arriving(key.fileobj, pending, sel, program, served, children, on_request)  # type: ignore[arg-type]
            elif kind in ("control", "owner"):
                if kind == "owner" or not os.read(key.fd, 64):  # the launcher is done, or the owner gone
                    sel.unregister(key.fd)
                    listening = _stop(listener, sel, listening)
            elif kind == "stop":
                sel.unregister(key.fd)
                listening = _stop(listener, sel, listening)
                for conn in list(pending):
                    sel.unregister(conn)
                    pending.pop(conn).close()
                for pid in children:
                    _kill(pid, signal.SIGTERM)
                kill_at = time.monotonic() + grace_s
            elif kind == "client":
                if not key.fileobj.recv(64):  # type: ignore[union-attr] - its client went away
                    sel.unregister(key.fileobj)
                    _kill(key.data[1])
            else:
                _reap(key.data[1], children, sel)
                served.last = time.time()  # idle counts from the last command's end
        now = time.monotonic()
        for conn in [c for c, p in pending.items() if p.deadline <= now]:  # too slow: closed on
            sel.unregister(conn)
            pending.pop(conn).close()
            served.refused += 1
        if kill_at is not None and now >= kill_at:
            for pid in children:
                _kill(pid)
            kill_at = now + grace_s
        if listening and not children:
            if idle_s is not None and time.time() - served.last >= idle_s:
                listening = _stop(listener, sel, listening)
            elif valid is not None and time.monotonic() - checked >= CHECK_S:
                checked = time.monotonic()
                if not valid():
                    listening = _stop(listener, sel, listening)
    for conn in list(pending):
        pending.pop(conn).close()
    sel.close()
    return served


def _stop(listener: socket.socket, sel: selectors.BaseSelector, listening: bool) -> bool:
    if listening:
        sel.unregister(listener)
        listener.close()
    return False


def _welcome(conn: socket.socket, served: Served) -> bool:
    """Whether the peer may send a request: this user's, and not a command this server runs."""
    peer, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                          struct.calcsize("3i")))
    if uid != os.getuid() or str(os.getpid()) in (proc_stat(peer) or [])[1:2]:  # a command it runs
        conn.close()
        served.refused += 1
        return False
    return True


def _arriving(conn: socket.socket, pending: dict[socket.socket, Pending], sel: selectors.BaseSelector,
              program: Program, served: Served, children: dict[int, tuple[socket.socket, int]],
              on_request: Callable[[Served], None] | None) -> None:
    """More of a pending request arrived: once whole, answer it (and fork its child)."""
    waiting = pending[conn]
    try:
        request = waiting.feed()
    except ValueError:
        sel.unregister(conn)
        pending.pop(conn).close()
        served.refused += 1
        return
    if request is None:
        return
    sel.unregister(conn)
    del pending[conn]
    started = answer(conn, waiting.fds, program, request, served)
    if started is not None:
        pidfd = os.pidfd_open(started)
        children[started] = (conn, pidfd)
        sel.register(conn, selectors.EVENT_READ, ("client", started))
        sel.register(pidfd, selectors.EVENT_READ, ("child", started))
    if on_request is not None:
        on_request(served)


def answer(conn: socket.socket, fds: list[int], program: Program, request: dict[str, Any],
           served: Served) -> int | None:
    """Answer a whole request on ``conn``, forking its child: the child's pid, or None (the client
    was told why and ``conn`` closed)."""
    try:
        reply = decide(program, request) if len(fds) == 3 else {
            "error": "not a request: three descriptors (stdin, stdout, stderr) come with one"}
        pid = _fork(program, request, fds, conn) if reply is None else None
    except Exception as e:  # noqa: BLE001 - a fork that failed (memory, process limits): the client runs it cold
        reply, pid = {"fresh": f"cold: the warm process could not fork ({e})"}, None
    _close(fds)
    if pid is None:
        served.refused += "error" in (reply or {})
        served.fresh += "fresh" in (reply or {})
        _tell(conn, reply or {"fresh": "cold: the client went away"})
        conn.close()
        return None
    served.forked += 1
    _tell(conn, {"pid": pid})
    return pid


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


def _close(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _tell(conn: socket.socket, message: dict[str, Any]) -> None:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
    except OSError:  # the client went away; its child is killed when that is seen
        pass


def _kill(pid: int, signum: int = signal.SIGKILL) -> None:
    try:
        os.killpg(pid, signum)
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

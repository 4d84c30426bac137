"""A forked child becomes a fresh process of its caller's: what :mod:`airctl.pipeline.warm.server` forks.

It takes the caller's standard streams, working folder, environment, umask, resource limits, CPU
affinity and nice level (:mod:`airctl.pipeline.warm.fit` made sure it can);
gives up what a fresh interpreter would not have (the server's descriptors, signal handlers,
faulthandler, the random generators' state, the standard streams' buffers); then the
:class:`~airctl.pipeline.warm.server.Program` runs. The child is a session and process group of
its own: the client forwards the terminal's signals to it. It gets SIGTERM should the warm process
die first (``PR_SET_PDEATHSIG``): nothing the warm process runs outlives it. It has no controlling
terminal, so a program that opens ``/dev/tty`` itself (a password prompt) does not reach it
(airctl never does).
"""

from __future__ import annotations

import faulthandler
import io
import os
import resource
import signal
import sys
import tempfile
import time
from typing import Any

from airctl.pipeline.ranks.orphans import die_with_parent
from airctl.pipeline.run import signals


def become(fds: list[int], request: dict[str, Any], unblock: set[int] | frozenset[int] = frozenset()) -> None:
    """In the child: the caller's process state (see the module); ``unblock``: the signals the
    server held across the fork, let through once the handlers are a fresh process's."""
    os.setsid()
    die_with_parent(os.getppid(), signal.SIGTERM)  # the warm process dies: it ends as a terminated command
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    close_inherited({0, 1, 2})
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in request["env"].items()})
    time.tzset()  # local time as the caller's TZ says, as a fresh process reads it at start
    os.umask(int(request.get("umask", 0o022)))
    for name, (soft, hard) in (request.get("limits") or {}).items():
        which = getattr(resource, str(name), None)
        if which is not None:
            try:
                resource.setrlimit(which, (soft, hard))
            except (ValueError, OSError):  # a limit this system does not let a process lower so
                pass
    _placement(request)
    signals.forget_after_fork()
    ignored = set(request.get("ignored") or ())
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"):  # as the caller has them
        signum = getattr(signal, name, None)
        if signum is not None:
            default = signal.default_int_handler if name == "SIGINT" else signal.SIG_DFL
            signal.signal(signum, signal.SIG_IGN if name in ignored else default)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    if unblock:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, unblock)
    faulthandler.disable()
    if os.environ.get("PYTHONFAULTHANDLER"):
        faulthandler.enable(all_threads=True)
    tempfile.tempdir = None  # found again from this environment's TMPDIR
    _random_as_fresh()


def _placement(request: dict[str, Any]) -> None:
    """The caller's CPU affinity and nice level (checked reachable before the fork)."""
    cpus = request.get("affinity")
    if isinstance(cpus, list) and cpus and hasattr(os, "sched_setaffinity"):
        try:
            if set(cpus) != os.sched_getaffinity(0):
                os.sched_setaffinity(0, cpus)
                torch = sys.modules.get("torch")
                if torch is not None and not os.environ.get("OMP_NUM_THREADS"):
                    torch.set_num_threads(max(1, len(cpus)))  # as a fresh import on these CPUs picks
        except (OSError, ValueError):
            pass
    nice = request.get("nice")
    if isinstance(nice, int):
        try:
            ours = os.getpriority(os.PRIO_PROCESS, 0)
            if nice > ours:
                os.setpriority(os.PRIO_PROCESS, 0, nice)
        except OSError:
            pass


def std_streams(unbuffered: bool) -> None:
    """New ``sys.stdin``/``stdout``/``stderr`` over descriptors 0, 1 and 2, as Python makes them at
    start: stdout line-buffered on a terminal, stderr always; ``unbuffered`` (``python -u``,
    ``PYTHONUNBUFFERED``): written through. Encoding and error handler as this interpreter's."""
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        old = getattr(sys, name) or getattr(sys, f"__{name}__")
        encoding, errors = getattr(old, "encoding", None) or "utf-8", getattr(old, "errors", None) or "strict"
        try:
            raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        except OSError:
            continue
        tty = raw.isatty()
        buffer = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        new = io.TextIOWrapper(buffer, encoding=encoding, errors=errors,
                               line_buffering=fd != 0 and not unbuffered and (tty or fd == 2),
                               write_through=fd != 0 and unbuffered)
        setattr(sys, name, new)
        setattr(sys, f"__{name}__", new)


def _random_as_fresh() -> None:
    """torch's CPU generator as a fresh import leaves it (a fixed seed), numpy's from the system's
    entropy as at its first use; Python's ``random`` reseeds itself after a fork."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.random.default_generator.manual_seed(torch.initial_seed())
        threads = os.environ.get("OMP_NUM_THREADS", "")
        if threads.isdigit() and int(threads) > 0 and int(threads) != torch.get_num_threads():
            torch.set_num_threads(int(threads))
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()


def close_inherited(keep: set[int]) -> None:
    """Close every descriptor but ``keep``: the parent's files, sockets and pipes are not this
    process's, and a lock held through one would outlive the parent."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass

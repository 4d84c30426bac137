"""A forked rank becomes what torchrun would have started: ``python -u -m airctl.pipeline.ranks.worker LEDGER``.

Called in the child the fork server (:mod:`airctl.pipeline.ranks.fork_server`) forked for one rank
client. It takes the client's standard streams, working folder and environment; gives up what a
fresh interpreter would not have (descriptors, signal handlers, random generators seeded alike in
every rank); runs the worker module as ``__main__``; and ends as Python ends a program: an uncaught
exception printed and exit 1, an uncaught interrupt killing the process with SIGINT, ``atexit``
handlers run, the streams flushed. The caller then leaves with ``os._exit``: the server's frames
must never run again here.
"""

from __future__ import annotations

import faulthandler
import io
import os
import runpy
import signal
import sys
import tempfile
import traceback
from typing import Any

from airctl.pipeline.run import signals
from airctl.pipeline.run.boundary import finish_program

WORKER_MODULE = "airctl.pipeline.ranks.worker"


def run_rank(fds: list[int], request: dict[str, Any], top: str, warm: bool = True) -> int:
    """Become the rank: from the warm state, or (``warm`` False: the server runs threads, whose locks
    a forked copy may find held) a fresh interpreter, as torchrun would have started it."""
    os.setsid()  # as torchrun starts each worker (start_new_session): its own session and group
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    close_inherited({0, 1, 2})
    os.chdir(request["cwd"])
    env = {str(k): str(v) for k, v in request["env"].items()}
    if not warm:
        os.execve(sys.executable, [sys.executable, "-u", "-m", WORKER_MODULE, top], env)
    os.environ.clear()
    os.environ.update(env)
    _fresh_process_state()
    sys.argv = ["-m", top]
    return _run_as_main()


def _fresh_process_state() -> None:
    env = os.environ
    signals.forget_after_fork()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    if env.get("PYTHONFAULTHANDLER"):
        faulthandler.enable(all_threads=True)
    for name in ("stdout", "stderr"):  # python -u: nothing waits in a buffer
        old = getattr(sys, name)
        new = io.TextIOWrapper(io.FileIO(old.fileno(), "w", closefd=False), encoding=old.encoding,
                               errors=old.errors, write_through=True)
        setattr(sys, name, new)
        setattr(sys, f"__{name}__", new)
    sys.path[0:1] = [os.getcwd()] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                     if p and p not in sys.path]
    tempfile.tempdir = None  # found again from this environment's TMPDIR
    torch = sys.modules.get("torch")
    if torch is not None:  # the generator a fresh process starts with; threads as its environment says
        torch.random.default_generator.manual_seed(torch.initial_seed())
        threads = env.get("OMP_NUM_THREADS", "")
        if threads.isdigit() and int(threads) > 0 and int(threads) != torch.get_num_threads():
            torch.set_num_threads(int(threads))
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()  # from the system's entropy, as at numpy's first use in a fresh process


def _run_as_main() -> int:
    interrupted = False
    sys.modules.pop(WORKER_MODULE, None)  # the launcher's import of it: a fresh ``-m`` has it only as __main__
    try:
        runpy.run_module(WORKER_MODULE, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as e:
        code = _exit_code(e.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        interrupted, code = True, 130
    except BaseException:  # noqa: BLE001 - as Python does with an uncaught exception
        sys.excepthook(*sys.exc_info())
        code = 1
    finish_program()
    if interrupted:  # Python ends a program that an interrupt ended by SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return code


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


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

"""A forked rank becomes what torchrun would have started: ``python -u -m airctl.pipeline.ranks.worker LEDGER``.

The :class:`~airctl.pipeline.warm.server.Program` of a multi-rank run's rank server
(:mod:`airctl.pipeline.ranks.forks`): it takes only requests for this run's ledger (``client.py
SOCKET LEDGER``, what torchrun starts per rank); in the child the caller's process state is taken
(:func:`airctl.pipeline.warm.child.become`), the worker module runs as ``__main__`` and the child
ends as Python ends a program: an uncaught exception printed and exit 1, an uncaught interrupt
killing the process with SIGINT, ``atexit`` handlers run, the streams flushed.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import traceback
from typing import Any

from airctl.pipeline.run.boundary import finish_program
from airctl.pipeline.warm.child import std_streams

WORKER_MODULE = "airctl.pipeline.ranks.worker"


class RankStart:
    """The ranks of the run at ``top``, forked from the rank server."""

    def __init__(self, top: str) -> None:
        self.top = top

    def refuse(self, request: dict[str, Any]) -> str | None:
        if request.get("argv") != [self.top]:
            return f"the rank server of {self.top} forks only its ranks (python client.py SOCKET {self.top})"
        return None

    def cold(self, request: dict[str, Any]) -> str | None:
        return None  # a rank that cannot start warm starts fresh in :meth:`run`, as torchrun would have

    def run(self, request: dict[str, Any]) -> int:
        """Become the rank: from the warm state, or (the server runs threads, whose locks a forked copy
        may find held) a fresh interpreter, as torchrun would have started it."""
        if threading.active_count() != 1:
            os.execve(sys.executable, [sys.executable, "-u", "-m", WORKER_MODULE, self.top], dict(os.environ))
        std_streams(unbuffered=True)  # python -u
        sys.path[0:1] = [os.getcwd()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                         if p and p not in sys.path]
        sys.argv = ["-m", self.top]
        return run_module_as_main(WORKER_MODULE)


def run_module_as_main(module: str) -> int:
    """``python -m MODULE`` from here on, ending as Python ends a program; its exit code."""
    interrupted = False
    sys.modules.pop(module, None)  # an earlier import of it: a fresh ``-m`` has it only as __main__
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
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

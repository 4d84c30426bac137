"""Run a piece of Python work in a forked child process, beside the compile (or the report), on another core.

Why: by default the capture keeps TorchAir's own pbtxt of the optimized GE graph, and only the
live GraphDef can give that text (TorchAir lists a node's attributes in the order of its
in-memory maps, which no copy keeps: airctl/hooks/concrete_graph.py). TorchAir's pbtxt
renderer is a Python loop: about 2 s for a 10k-op graph, in a compile that is otherwise single
threaded. A child forked at the moment TorchAir dumps the graph holds the same objects (copy on
write), so it writes the same file as TorchAir would in-process, while the compile and the run
go on in the parent (docs/performance.md).

The child runs the job and nothing else: its cyclic collector off (a full collection would walk,
and so copy, the parent's whole heap), then ``os._exit`` (no atexit handlers, no finalizers, no
second flush of buffers it inherited); Ctrl-C or a kill ends it at once (the default actions). A
signal that reaches the parent while it forks is held back (:class:`airctl.signal_guard.Holder`)
until the fork is done: Python runs
``os.fork``'s own callbacks (logging's lock handling) as Python code, and a ``KeyboardInterrupt``
raised in one of them is printed and dropped. :meth:`Aside.wait` says whether the job succeeded;
the parent acts on the result only then (lists the file). Where ``fork`` does not exist (Windows)
or fails, the job runs in the parent when waited for.

A job may also hand back bytes (``Aside(job, returns=True)``; :meth:`Aside.result`): the child
writes them to an unnamed temporary file opened before the fork, so it never blocks on a reader
(a pipe holds 64 KiB) and nothing is left on disk. The report works out its lane views this way
beside its diffs (:mod:`airctl.report.ahead`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from airctl.signal_guard import HELD, deferred_signals


class Aside:
    """A job started in a forked child (or kept to run inline when waited for)."""

    def __init__(self, job: Callable[[], Any], returns: bool = False) -> None:
        self._job: Callable[[], Any] | None = job
        self._pid: int | None = None
        self._ok: bool | None = None
        self._out: Any = None  # returns: the child's bytes (a temporary file), or the inline job's
        fork = getattr(os, "fork", None)
        if fork is None:
            return
        if returns:
            self._out = tempfile.TemporaryFile()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered that the child could print again
            with contextlib.suppress(Exception):
                stream.flush()
        with deferred_signals():  # a signal during the fork: delivered after it, to the handler it was meant for
            try:
                pid = fork()
            except OSError:
                pid = None
            if pid == 0:  # the child
                code = 1
                try:
                    for signum in HELD:  # the default actions: a Ctrl-C or a kill ends the child at once
                        signal.signal(signum, signal.SIG_DFL)
                    gc.disable()
                    data = job()
                    if self._out is not None:
                        self._out.write(data)
                        self._out.flush()
                    code = 0
                except BaseException:  # noqa: BLE001 - reported by the exit code; the parent decides
                    code = 1
                finally:
                    os._exit(code)
        if pid is not None:
            self._pid = pid
            self._job = None  # the parent keeps nothing the job holds
        elif self._out is not None:  # the fork failed: the job runs inline, its result kept in memory
            self._out.close()
            self._out = None

    def wait(self) -> bool:
        """Wait for the job; True when it succeeded (the inline fallback raises as the job does)."""
        if self._ok is not None:
            return self._ok
        if self._pid is None:
            job, self._job = self._job, None
            if job is not None:
                self._out = job()
            self._ok = True
            return True
        while True:
            try:
                _, status = os.waitpid(self._pid, 0)
                break
            except ChildProcessError:  # reaped elsewhere: the caller checks the file it expects
                self._ok = True
                return True
            except InterruptedError:
                continue
        self._ok = os.waitstatus_to_exitcode(status) == 0
        return self._ok

    def result(self) -> bytes | None:
        """What the job returned (``returns=True``), once it has ended; None when it failed in the child
        (the caller does the work itself). Read once: the temporary file is closed."""
        ok = self.wait()
        out, self._out = self._out, None
        if self._pid is None:
            return out
        if out is None:
            return None
        try:
            if not ok:
                return None
            out.seek(0)
            return out.read()
        finally:
            out.close()

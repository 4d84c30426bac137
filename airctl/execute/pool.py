"""The threads that run side streams: kept between runs, owned by whoever creates the pool.

A fresh thread costs its first ops some warm-up, so a stream's worker is not created per call:
a :class:`WorkerPool` keeps idle threads and hands each submitted job to one. The pool is an
object, not a module global: its owner (:class:`~airctl.execute.executors.Executors`, or a
:class:`~airctl.execute.executor.StreamExecutor` used on its own) creates it and can
:meth:`~WorkerPool.close` it, which ends its idle threads. Threads are daemons, so a stuck op
never blocks interpreter exit.

>>> pool = WorkerPool()
>>> job = pool.submit(print, "hello from a worker")
>>> job.done.wait(5)
hello from a worker
True
>>> pool.close()
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("airctl")

_STOP = None  # put on a worker's queue: the thread ends


def _done() -> None:
    """A finished job's function."""


class Job:
    """One submitted call; ``done`` is set when it returned or raised."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args
        self.stream = ""  # the stream it runs, for messages
        self.done = threading.Event()


class WorkerPool:
    """Daemon threads kept between runs; :meth:`submit` a call, :meth:`close` when done."""

    def __init__(self, name: str = "airctl-stream") -> None:
        self.name = name
        self._idle: list[queue.SimpleQueue] = []
        self._lock = threading.Lock()
        self._closed = False
        self.started = 0  # threads started so far (tests, diagnostics)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Job:
        job = Job(fn, args)
        with self._lock:
            if self._closed:
                raise RuntimeError("WorkerPool.submit after close()")
            q = self._idle.pop() if self._idle else None
            if q is None:
                self.started += 1
        if q is None:
            q = queue.SimpleQueue()
            threading.Thread(target=self._loop, args=(q,), name=self.name, daemon=True).start()
        q.put(job)
        return job

    def close(self) -> None:
        """End the idle threads; busy ones end when their job returns. Idempotent."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for q in idle:
            q.put(_STOP)

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _loop(self, q: queue.SimpleQueue) -> None:
        while True:
            job = q.get()
            if job is _STOP:
                return
            try:
                job.fn(*job.args)
            except BaseException:  # noqa: BLE001 - a job's failure must not end the worker
                log.exception("airctl: a worker job raised")
            finally:
                job.fn, job.args = _done, ()  # drop what the call referenced before anyone hears it is done
                job.done.set()
            with self._lock:
                if self._closed:
                    return
                self._idle.append(q)

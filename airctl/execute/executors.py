"""The owner of the multi-stream executors of a run: settings, cache, recorder, worker threads.

Under sim every compiled graph runs on a :class:`~airctl.execute.executor.StreamExecutor`:
a GE graph's converted FX graph (max-autotune, :meth:`Executors.run_ge`) and an aclgraph
forward's final FX graph (reduce-overhead / npugraph_ex, :meth:`Executors.run_acl`). What those
runs share is one :class:`Executors` object (no module globals), created by whoever runs a model
and passed down:

- the settings of the runs that follow (threads per stream, wait timeout, serial), changed for
  a block with :meth:`Executors.configure`;
- one executor per GraphModule and mode (dropped by :meth:`Executors.close`);
- the :class:`~airctl.execute.recorder.Recorder` the runs report to (:meth:`Executors.recording`);
- the :class:`~airctl.execute.pool.WorkerPool` of side-stream threads, made on first use and
  ended by :meth:`Executors.close`;
- in a multi-rank run, the rank's :class:`~airctl.ledger.collectives.CollectiveLog`.

>>> ex = Executors()
>>> with ex.configure(threads_per_stream=1, timeout_s=5.0) as settings:
...     (settings.threads_per_stream, settings.timeout_s)
(1, 5.0)
>>> ex.settings.timeout_s
60.0
>>> ex.close()
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from airctl.execute.executor import DEFAULT_TIMEOUT_S, StreamExecutor
from airctl.execute.pool import WorkerPool
from airctl.execute.recorder import Nested, Recorder, Sink
from airctl.ledger.collectives import CollectiveLog
from airctl.modes import Mode


@dataclass
class Settings:
    threads_per_stream: int | None = None  # intra-op threads of each stream's thread; None: leave as is
    timeout_s: float = DEFAULT_TIMEOUT_S  # the longest single wait before the run stops
    serial: bool = False  # every stream on the calling thread (one-stream baseline; the profiler's view)


class Executors:
    """Runs compiled graphs on cached multi-stream executors; see the module docstring."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.recorder: Sink | None = None
        self.collectives: CollectiveLog | None = None  # multi-rank runs: the rank's collective log
        self._cache: weakref.WeakKeyDictionary[Any, dict[str, StreamExecutor]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._pool: WorkerPool | None = None

    # -- settings and reporting --------------------------------------------------------------------
    @contextlib.contextmanager
    def configure(self, threads_per_stream: int | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                  serial: bool = False) -> Iterator[Settings]:
        """Use these settings for the runs inside the block; the previous ones come back after it."""
        s = self.settings
        old = (s.threads_per_stream, s.timeout_s, s.serial)
        s.threads_per_stream, s.timeout_s, s.serial = threads_per_stream, timeout_s, serial
        try:
            yield s
        finally:
            s.threads_per_stream, s.timeout_s, s.serial = old

    @contextlib.contextmanager
    def recording(self, rec: Recorder) -> Iterator[Recorder]:
        """Runs inside the block report to ``rec`` (and to the recorder of an enclosing block)."""
        outer = self.recorder
        self.recorder = rec if outer is None else Nested(outer, rec)
        try:
            yield rec
        finally:
            self.recorder = outer

    # -- executors -----------------------------------------------------------------------------------
    def pool(self) -> WorkerPool:
        """The side-stream threads of every executor here (made on first use, again after close)."""
        with self._lock:
            if self._pool is None or self._pool.closed:
                self._pool = WorkerPool()
            return self._pool

    def executor_for(self, gm: Any, mode: Mode, name: str, args: Sequence[Any] = ()) -> StreamExecutor:
        """The cached executor of ``gm`` under ``mode`` (CUDA streams when ``args`` are CUDA tensors),
        set up with the current settings, recorder and pool."""
        from airctl.execute.cuda import CudaStreamExecutor, wants_cuda

        cls = CudaStreamExecutor if wants_cuda(args) else StreamExecutor
        s = self.settings
        with self._lock:
            per_gm = self._cache.get(gm)
            if per_gm is None:
                per_gm = self._cache[gm] = {}
            ex = per_gm.get(mode)
        if ex is None or ex.name != name or type(ex) is not cls:
            ex = cls(gm, mode, name, threads_per_stream=s.threads_per_stream, timeout_s=s.timeout_s)
            with self._lock:
                per_gm[mode] = ex
        ex.threads_per_stream = s.threads_per_stream
        ex.timeout_s = s.timeout_s
        ex.serial = s.serial or isinstance(ex, CudaStreamExecutor)
        ex.recorder = self.recorder
        ex.collectives = self.collectives
        ex.pool = self.pool()
        return ex

    def run_ge(self, gm: Any, args: Sequence[Any], name: str) -> tuple[Any, ...]:
        """A GE graph's run: its converted FX graph on its streams, GE semantics; always a tuple."""
        out = self.executor_for(gm, Mode.MAX_AUTOTUNE, name, args).run(list(args))
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    def run_acl(self, gm: Any, args: Sequence[Any], name: str) -> Any:
        """An aclgraph forward: its final FX graph on its streams, aclgraph semantics."""
        return self.executor_for(gm, Mode.REDUCE_OVERHEAD, name, args).run(list(args))

    def run_npugraph_ex(self, gm: Any, args: Sequence[Any], name: str) -> Any:
        """An npugraph_ex forward: aclgraph semantics, as :meth:`run_acl`; its findings name npugraph_ex."""
        return self.executor_for(gm, Mode.NPUGRAPH_EX, name, args).run(list(args))

    def close(self) -> None:
        """End the worker threads and drop the cached executors (each holds its GraphModule, so the
        weak cache alone would never let one go). Usable afterwards: a later run starts afresh."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._cache.clear()
        if pool is not None:
            pool.close()

"""What a run's compiled graphs execute on: the multi-stream executor, with this run's settings.

:class:`RunExecution` is the one object a compile or a script run creates for execution. It owns
the run's :class:`~airctl.execute.executors.Executors` (cached executors, worker threads,
settings) and its :class:`~airctl.execute.recorder.Recorder` (races), and makes the
:class:`~airctl.sim.session.SimContext` the sim session needs: GE graphs and aclgraph forwards
run on :mod:`airctl.execute`'s executor. ``airctl profile`` and the per-graph check of
``airctl run`` add recorders of their own for a block (:meth:`recording`). A rank of a multi-rank
run gives it the rank's collective log and the default process-group timeout
(docs/multi-rank.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from airctl.execute.executor import DEFAULT_TIMEOUT_S
from airctl.execute.executors import Executors, Settings
from airctl.execute.recorder import Recorder
from airctl.ledger.collectives import CollectiveLog


class RunExecution:
    def __init__(self, threads_per_stream: int | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 collectives: CollectiveLog | None = None, collective_timeout_s: float | None = None) -> None:
        self.executors = Executors(Settings(threads_per_stream=threads_per_stream, timeout_s=timeout_s))
        self.recorder = Recorder()
        self.executors.recorder = self.recorder
        self.executors.collectives = collectives
        self.collectives = collectives
        self.collective_timeout_s = collective_timeout_s

    @contextmanager
    def recording(self, rec: Recorder) -> Iterator[Recorder]:
        """Runs inside the block also report to ``rec`` (timed events, if it keeps them)."""
        with self.executors.recording(rec):
            yield rec

    def race_rows(self) -> list[dict[str, Any]]:
        return self.recorder.race_rows()

    def close(self) -> None:
        self.executors.close()

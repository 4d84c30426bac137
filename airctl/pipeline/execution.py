"""What a run's compiled graphs execute on: the multi-stream executor, with this run's settings.

:class:`RunExecution` is the one object a compile or a script run creates for execution; it makes
the :class:`~airctl.sim.session.SimContext` the sim session needs (GE graphs and aclgraph forwards
run on :mod:`airctl.execute`'s executor), and records races and timed events into its recorders.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from airctl.execute.recorder import Recorder
from airctl.modes import MAX_AUTOTUNE, REDUCE_OVERHEAD
from airctl.sim.session import SimContext


class RunExecution:
    def __init__(self, threads_per_stream: int | None = None, timeout_s: float = 60.0) -> None:
        self.threads_per_stream = threads_per_stream
        self.timeout_s = timeout_s
        self.recorder = Recorder()

    def _run(self, gm: Any, args: Sequence[Any], name: str, mode: str) -> Any:
        from airctl.execute import sim_hooks
        from airctl.execute.recorder import recording

        with sim_hooks.configure(self.threads_per_stream, self.timeout_s), recording(self.recorder):
            return sim_hooks.executor_for(gm, mode, name, args).run(list(args))

    def run_ge(self, gm: Any, args: Sequence[Any], name: str) -> tuple[Any, ...]:
        out = self._run(gm, args, name, MAX_AUTOTUNE)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    def run_acl(self, gm: Any, args: Sequence[Any], name: str) -> Any:
        return self._run(gm, args, name, REDUCE_OVERHEAD)

    def sim_context(self) -> SimContext:
        return SimContext(run_ge=self.run_ge, run_acl=self.run_acl)

    @contextmanager
    def recording(self, rec: Recorder) -> Iterator[Recorder]:
        from airctl.execute.recorder import recording

        with recording(rec):
            yield rec

    def race_rows(self) -> list[dict[str, Any]]:
        return self.recorder.race_rows()

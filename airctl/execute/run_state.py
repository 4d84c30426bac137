"""The shared state of one multi-stream call, which every stream's worker reads and writes.

:class:`~airctl.execute.executor.StreamExecutor` is reusable across calls; what belongs to one
call (the values computed so far, each node's vector-clock stamp, who is blocked on what, the
events and races found) lives here, so the race checks (:mod:`~airctl.execute.hazards`) and the
deadlock watch (:mod:`~airctl.execute.deadlock`) can work on it without holding the executor.
"""

from __future__ import annotations

import threading
import time
from typing import Any, NamedTuple

from airctl.execute.schedule import Schedule
from airctl.execute.timeline import OpEvent, Race, SyncEdge


class Stamp(NamedTuple):
    """When a node ran: its stream, its position there, and that stream's vector clock then."""

    sid: int
    pos: int
    clock: tuple[int, ...]


class Abort(Exception):
    """Another stream failed: this one stops quietly."""


class RunState:
    """Values, stamps and blocking state of one call of ``sched`` (named ``name`` in messages).

    ``origin`` is ``(step, t0)`` from the recorder that keeps events, None when nobody does:
    event times are ``perf_counter() - t0`` and events are kept only when it is set.
    """

    def __init__(self, sched: Schedule, name: str, timeout_s: float,
                 origin: tuple[int, float] | None = None) -> None:
        n = len(sched.items)
        k = len(sched.streams)
        self.sched = sched
        self.name = name
        self.timeout_s = timeout_s
        self.step, self.t0 = origin if origin is not None else (0, time.perf_counter())
        self.keep = origin is not None
        self.values: list[Any] = [None] * n
        self.stamps: list[Stamp | None] = [None] * n
        self.done = [False] * n
        self.cond = threading.Condition()
        self.blocked: dict[int, tuple[int, list[int]]] = {}  # stream -> (node, the nodes it waits for)
        self.running: dict[int, int] = {}  # stream -> node it is running
        self.finished = {s for s in range(k) if not sched.per_stream[s]}
        self.error: BaseException | None = None
        self.aborted = False
        self.clock = [[0] * k for _ in range(k)]
        self.pos = [0] * k
        self.events: list[OpEvent] = []
        self.syncs: list[SyncEdge] = []
        self.races: list[Race] = []
        self.hb_lock = threading.Lock()  # in-place hazard bookkeeping below
        self.last_writer: dict[int, tuple[int, Stamp]] = {}
        self.readers: dict[int, dict[int, tuple[int, Stamp]]] = {}
        self.collectives: Any = None  # the executor's CollectiveLog for this call, if any
        self.collective_seq: dict[int, int] = {}  # collective node -> its sequence number in the log

    def fail(self, e: BaseException) -> None:
        """Record the first failure and wake every stream so it stops."""
        with self.cond:
            if self.error is None:
                self.error = e
            self.aborted = True
            self.cond.notify_all()

    def elapsed(self) -> float:
        """Seconds since the step origin (event time stamps)."""
        return time.perf_counter() - self.t0

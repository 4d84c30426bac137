"""Where multi-stream runs report: races always, timed events only when someone profiles.

The executor is called from deep inside TorchAir (a GE graph's run, an aclgraph forward), far
from the command that wants its findings. The command creates a :class:`Recorder` and hands it
to the executors' owner (:meth:`airctl.execute.executors.Executors.recording`), which gives it to
every executor it runs; a :class:`~airctl.execute.executor.StreamExecutor` reports to the one it
holds and to nobody else. A recorder keeps one :class:`~airctl.execute.timeline.Timeline` per
graph; races are kept once per (graph, reader, producer), however many steps run.

Recorders nest (``airctl profile`` records timed steps inside a compile that records races):
:class:`Nested` reports every run to both, with the inner one's step clock.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict

from airctl.execute.timeline import OpEvent, Race, SyncEdge, Timeline
from airctl.modes import Mode

log = logging.getLogger("airctl")


class Recorder:
    """Races of every run it is given, and with ``keep_events`` the timed events of each step."""

    def __init__(self, keep_events: bool = False) -> None:
        self.keep_events = keep_events
        self.step = 0
        self.step_t0 = time.perf_counter()
        self.timelines: dict[str, Timeline] = {}
        self.races: list[tuple[str, Race]] = []  # (graph, race)
        self._seen: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    def start_step(self, step: int) -> None:
        self.step = step
        self.step_t0 = time.perf_counter()

    def origin(self) -> tuple[int, float] | None:
        """(step, step start time) for event time stamps while keeping events; None otherwise."""
        return (self.step, self.step_t0) if self.keep_events else None

    def timeline(self, graph: str, mode: Mode) -> Timeline:
        with self._lock:
            tl = self.timelines.get(graph)
            if tl is None:
                tl = self.timelines[graph] = Timeline(graph=graph, mode=mode.value, steps=0)
            return tl

    def add_run(self, graph: str, mode: Mode, events: list[OpEvent], syncs: list[SyncEdge], races: list[Race],
                streams: list[str], notes: list[str], seconds: float = 0.0) -> None:
        tl = self.timeline(graph, mode)
        with self._lock:
            if self.keep_events:  # this graph's share of the step's wall time; steps = steps seen
                while len(tl.step_seconds) <= self.step:
                    tl.step_seconds.append(0.0)
                tl.step_seconds[self.step] += seconds
                tl.steps = len(tl.step_seconds)
            for race in races:
                key = (graph, race.reader, race.producer)
                if key not in self._seen:
                    self._seen.add(key)
                    self.races.append((graph, race))
                    tl.races.append(race)
            if self.keep_events:
                tl.events.extend(events)
                tl.syncs.extend(syncs)
            tl.meta.setdefault("streams", [])
            for s in streams:
                if s not in tl.meta["streams"]:
                    tl.meta["streams"].append(s)
            for n in notes:
                tl.meta.setdefault("notes", [])
                if n not in tl.meta["notes"]:
                    tl.meta["notes"].append(n)
            tl.meta["runs"] = int(tl.meta.get("runs", 0)) + 1

    def race_rows(self) -> list[dict]:
        """Races as JSON rows for ``index.json`` (``execution.races``)."""
        return [{"graph": graph, **asdict(r)} for graph, r in self.races]


class Nested:
    """Two recorders, one inside the other: both get every run; event times follow the inner one
    while it keeps events, else the outer one."""

    def __init__(self, outer: Recorder | Nested, inner: Recorder) -> None:
        self.outer, self.inner = outer, inner

    def origin(self) -> tuple[int, float] | None:
        return self.inner.origin() or self.outer.origin()

    def add_run(self, graph: str, mode: Mode, events: list[OpEvent], syncs: list[SyncEdge], races: list[Race],
                streams: list[str], notes: list[str], seconds: float = 0.0) -> None:
        self.outer.add_run(graph, mode, events, syncs, races, streams, notes, seconds)
        self.inner.add_run(graph, mode, events, syncs, races, streams, notes, seconds)


Sink = Recorder | Nested  # what an executor reports to

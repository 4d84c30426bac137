"""Where multi-stream runs report: races always, timed events only when someone profiles.

The executor is called from deep inside TorchAir (a GE graph's run, an aclgraph forward), far
from the command that wants its findings. Commands make a :class:`Recorder` active around the
model call (``with recording(rec):``); every executor run reports to all active recorders. A
recorder keeps one :class:`~airctl.execute.timeline.Timeline` per graph; races are kept once
per (graph, reader, producer), however many steps run.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator

from airctl.execute.timeline import OpEvent, Race, SyncEdge, Timeline

log = logging.getLogger("airctl")
_active: list[Recorder] = []
_lock = threading.Lock()


class Recorder:
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

    def timeline(self, graph: str, mode: str) -> Timeline:
        with self._lock:
            tl = self.timelines.get(graph)
            if tl is None:
                tl = self.timelines[graph] = Timeline(graph=graph, mode=mode, steps=0)
            return tl

    def add_run(self, graph: str, mode: str, events: list[OpEvent], syncs: list[SyncEdge], races: list[Race],
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
        rows = []
        for graph, r in self.races:
            rows.append({"graph": graph, "reader": r.reader, "producer": r.producer, "reader_stream": r.reader_stream,
                         "producer_stream": r.producer_stream, "reader_source": r.reader_source,
                         "producer_source": r.producer_source, "message": r.message})
        return rows


@contextlib.contextmanager
def recording(rec: Recorder) -> Iterator[Recorder]:
    with _lock:
        _active.append(rec)
    try:
        yield rec
    finally:
        with _lock:
            if rec in _active:
                _active.remove(rec)


def active() -> list[Recorder]:
    with _lock:
        return list(_active)


def keep_events() -> bool:
    return any(r.keep_events for r in active())


def report(graph: str, mode: str, events: list[OpEvent], syncs: list[SyncEdge], races: list[Race],
           streams: list[str], notes: list[str], seconds: float = 0.0) -> None:
    recs = active()
    if not recs:
        for race in races:
            log.warning("airctl: stream race in %s: %s", graph, race.message)
        return
    for rec in recs:
        rec.add_run(graph, mode, events, syncs, races, streams, notes, seconds)


def step_origin() -> tuple[int, float] | None:
    """(step, start time) of the innermost recorder that keeps events, for event time stamps."""
    for rec in reversed(active()):
        if rec.keep_events:
            return rec.step, rec.step_t0
    return None

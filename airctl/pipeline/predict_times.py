"""TIMES for a prediction, read: a CSV, a torch_npu profiler folder or ``estimate`` (docs/profile.md "TIMES").

A profiler folder also gives what it measured of the device and the host: the dispatch gap, the event
latency, the host's launch interval (:mod:`airctl.predict.host`) and its memory files
(:mod:`airctl.profile.ascend.memory_files`). :func:`check_names` refuses a table of another model.
Split from :mod:`airctl.pipeline.predict`, which prices plans with what is read here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.devices import Device, device
from airctl.execute.timeline import Timeline
from airctl.graph.model import Graph
from airctl.io.source import is_profiler_folder
from airctl.predict.plan import ReplayPlan, plan_from_timeline
from airctl.predict.step import Conditions
from airctl.predict.times import TimesError, TimesTable, read_times_csv

ESTIMATE = "estimate"


def load_times(spec: str, ledger_dir: Path | None, fx_graphs: list[Graph], dev: Device | None
               ) -> tuple[TimesTable, float, float, list[str]]:
    """The table ``spec`` names, the dispatch gap and event latency it measured (0 unless a profile),
    and notes."""
    loaded = load_timing(spec, ledger_dir, fx_graphs, dev)
    return loaded.table, loaded.gap_us, loaded.latency_us, loaded.notes


@dataclass
class Timing:
    """A TIMES source, read: the table, and what a profile measured of the device and the host."""

    table: TimesTable
    gap_us: float = 0.0
    latency_us: float = 0.0
    notes: list[str] = field(default_factory=list)
    host_us: float | None = None  # the profile's median launch interval (eager/GE host model)
    measured_memory: dict[str, Any] | None = None  # the folder's memory files, read (docs/memory.md)

    def conditions(self, dev: Device | None, launch_us: float | None, fx_graphs: list[Graph]) -> Conditions:
        return Conditions(dev, self.gap_us, self.latency_us, launch_us, self.host_us, fx_graphs)


def measured_memory(timeline: Timeline) -> dict[str, Any] | None:
    """What the profiled rank's memory files say (None: it wrote none)."""
    from airctl.profile.ascend.memory_files import read_memory

    folder = timeline.meta.get("folder")
    found = read_memory(Path(folder)) if folder else None
    return found.to_json() if found is not None else None


def _estimated(spec: str, ledger_dir: Path | None, fx_graphs: list[Graph], dev: Device | None) -> Timing:
    from airctl.predict.estimate import estimate_table

    table, unsized = estimate_table(fx_graphs, dev or device(None))
    notes = [f"estimate: {len(unsized)} kernel(s) without recorded shapes take the fixed "
             f"{table.default.us if table.default else 0:g} µs: {', '.join(unsized[:8])}"
             + (" …" if len(unsized) > 8 else "")] if unsized else []
    return Timing(table, notes=notes)


def _profiled(spec: str, ledger_dir: Path | None, fx_graphs: list[Graph], dev: Device | None) -> Timing:
    path = Path(spec)
    if not is_profiler_folder(path):
        raise TimesError("a folder, but not a torch_npu profiler folder", file=spec, hint=f"--times takes {SAYS}")
    from airctl.predict.host import host_interval_us
    from airctl.predict.profiled import dispatch_gap_us, event_latency_us, profile_table, profile_timeline
    from airctl.profile import events as ev

    timeline, notes = profile_timeline(path, ledger_dir)
    step = ev.representative_step(timeline)
    host = host_interval_us(plan_from_timeline(timeline, step)[0]) if step is not None else None
    return Timing(profile_table(timeline, spec), dispatch_gap_us(timeline), event_latency_us(timeline), notes,
                  host, measured_memory(timeline))


def _tabled(spec: str, ledger_dir: Path | None, fx_graphs: list[Graph], dev: Device | None) -> Timing:
    return Timing(read_times_csv(Path(spec)))


@dataclass(frozen=True)
class TimesSource:
    """One kind of TIMES: what it is called, whether a spec names one, how it is read."""

    called: str
    names: Callable[[str], bool]
    read: Callable[[str, Path | None, list[Graph], Device | None], Timing]


# the TIMES a prediction reads, tried in order (the first whose ``names`` answers yes reads the spec);
# a new kind of source is one row here and its words in cli.options.TIMES_SOURCES_HELP
SOURCES = (
    TimesSource("`estimate`", lambda spec: spec == ESTIMATE, _estimated),
    TimesSource("a torch_npu profiler folder (*_ascend_pt or its parent)", lambda spec: Path(spec).is_dir(), _profiled),
    TimesSource("a CSV (node,us or op,us)", lambda spec: True, _tabled),
)
SAYS = ", ".join(s.called for s in SOURCES[1:]) + f" or {SOURCES[0].called}"


def load_timing(spec: str, ledger_dir: Path | None, fx_graphs: list[Graph], dev: Device | None) -> Timing:
    """:func:`load_times`, with the host's launch interval when ``spec`` is a profiler folder."""
    source = next(s for s in SOURCES if s.names(spec))
    return source.read(spec, ledger_dir, fx_graphs, dev)


def check_names(table: TimesTable, plans: list[ReplayPlan]) -> None:
    """A table (or profile) none of whose rows matches a node or op of the run is another model's."""
    from airctl.predict.times import op_keys

    if table.label == "estimate" or table.default is not None or not table.names():
        return
    names = {n for p in plans for t in p.tasks for n in (t.name, *t.aliases)}
    ops = {k for p in plans for t in p.kernels() for op in (t.op, *(t.meta.get("fx_ops") or ())) for k in op_keys(op)}
    if names & set(table.rows) or ops & set(table.op_rows):
        return
    what = "tasks of the profile" if table.label == "profile" else "names in the table"
    sample = ", ".join(sorted(table.names())[:3])
    raise TimesError(f"none of the {len(table.names())} {what} is a node or op of the run ({sample}, …)",
                     file=table.source, hint="times of another model or run? `airctl dump --type fx` lists the "
                                             "run's node names; an `op,us` table matches by op instead")

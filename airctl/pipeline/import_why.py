"""``airctl import``: the graph breaks, recompiles, recaptures and cache decisions in the imported logs.

A log brought from an NPU machine holds what a recorded run hears as it runs (Dynamo's
``TORCH_LOGS=graph_breaks,recompiles`` lines, TorchAir's and npugraph_ex's DEBUG lines); read by
:mod:`airctl.io.why_log`, the same reader, they become the same ``events`` and ``captures`` rows,
so ``airctl why`` shows the same table. A graph break or recompile is linked to the next graph the
same log lists (the graph Dynamo compiled after it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airctl.importer.plan import ImportPlan
from airctl.io.torchair_why import CAPTURE_KINDS, capture_rows
from airctl.io.why_log import read_why_file
from airctl.ledger.writer import LedgerWriter


def record_why_events(ledger: LedgerWriter, plan: ImportPlan) -> None:
    """``airctl why``'s events in the logs: Dynamo's graph breaks and recompiles as ``events``,
    npugraph_ex's captures as ``captures`` (the shapes a run records), ordered by file then line."""
    events: list[dict[str, Any]] = []
    captures: list[dict[str, Any]] = []
    offset = 0
    offsets: dict[str, int] = {}
    names = {g.name: g.id for g in ledger.run_index.graphs if g.name}
    for log in plan.logs:
        read = read_why_file(Path(log.path))
        offsets[str(log.path)] = offset
        for event in read:
            event["seq"] += offset
        captures += [{"graph": names.get(r["graph_name"], r["graph_name"]), **r, "source": str(log.path)}
                     for r in capture_rows([e for e in read if e["kind"] in CAPTURE_KINDS])]
        events += [{**e, "source": str(log.path)} for e in read if e["kind"] not in CAPTURE_KINDS]
        offset += max((e["seq"] for e in read), default=0) + 1
    starts = sorted((_first_line(g, log.path), g.id) for log in plan.logs for g in ledger.run_index.graphs
                    if _first_line(g, log.path) is not None)
    for event in events:  # a graph break or recompile produced the next graph the same log lists
        if event["kind"] in ("graph_break", "recompile"):
            line = event["seq"] - offsets[event["source"]]
            event["graph"] = next((gid for (file, first), gid in starts if file == event["source"] and first > line),
                                  None)
        ledger.add_event({k: v for k, v in event.items() if v is not None})
    if captures:
        ledger.set(captures=captures)


def _first_line(graph: Any, log: Path | str) -> tuple[str, int] | None:
    """(log, line) of a graph's first stage read from ``log``."""
    for stage in graph.stages:
        file, _, line = (stage.imported_from or "").rpartition(":")
        if file == str(log) and line.isdigit():
            return file, int(line)
    return None

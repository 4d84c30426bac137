"""Where a command's time went: its phases, from what the ledger records (``airctl show --phases``).

A run records durations (``timings``: start-up, backend, load, eager, compile-and-run, the script,
...) with when each ended (``timing_ends``), and the moment each stage of each graph was captured
(a stage's ``elapsed``). Laid on one time line from the process's start they partition the command:

- ``startup_seconds`` (the interpreter, airctl's imports, the arguments) before the command's own
  code began, then ``before_run_seconds`` (the command's work until its ledger existed: the model,
  pass file and run it names), in the first run a process writes only (a bisect's steps, profile's
  rounds after it have neither);
- each timed span; inside the span that compiled (``compile_and_run``, ``script``), the interval
  that ends at a stage belongs to that stage's step: Dynamo's trace of the frame (``dynamo``), AOT
  (``aot-*``), a user pass (``yaml:*``), a TorchAir FX or GE pass (``after:*``, ``ge:after:*``), the
  FX->GE conversion (``ge-original``), GE's own optimization (``ge-optimized``); each interval
  includes airctl's capture of that stage. After the last stage of a span: GE's compile or the
  graph capture, warm-up and first run (``compile``), the script's own code (``airctl run``);
- after the last span, until the run's end: airctl's finish (verdicts, the log, report.html).

Whatever no span covers is "unattributed". The time after the ledger's last write (the summary
printed, the interpreter's exit) is outside what a ledger can know.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from airctl.ledger.index import RunIndex

SPANS = {  # timings key -> phase name, in the order a command runs them
    "backend_seconds": "backend: torch, TorchAir and the NPU stand-in imported",
    "load_seconds": "load the model script",
    "prepare_seconds": "the compile's set-up: incremental key, capture session, TorchAir's config",
    "eager_seconds": "eager reference run",
    "compile_and_run_seconds": None,  # split by the stages inside it
    "script_seconds": None,
    "after_run_seconds": "runs after the first (profile steps, checks)",
    "ranks_seconds": "ranks",
}
_TAIL = {"compile_and_run_seconds": "compile {graph}: GE compile / capture, warm-up and first run",
         "script_seconds": "the script's own code and compiled runs (outside the compiles)"}


@dataclass
class Phase:
    name: str
    seconds: float
    start: float  # seconds from the run's start (negative: before the ledger existed)
    graph: str | None = None


def _stage_phase(stage: str, graph: str) -> str:
    if stage == "dynamo":
        return f"Dynamo trace (frame of graph {graph})"
    if stage.startswith("aot-"):
        return f"AOT autograd ({stage[4:]})"
    if stage.startswith("yaml:"):
        return f"user pass {stage[5:]}"
    if stage.startswith("ge:after:"):
        return f"TorchAir GE pass {stage[9:]}"
    if stage.startswith("after:"):
        return f"TorchAir FX pass {stage[6:]}"
    if stage == "ge-original":
        return "FX->GE conversion"
    if stage == "ge-optimized":
        return "GE optimization (TorchAir's GE passes end)"
    if stage == "fx-final":
        return "TorchAir FX passes end (fx-final)"
    if stage.startswith("failed:"):
        return f"failed pass {stage[7:]}"
    return f"stage {stage}"


def phases(index: RunIndex) -> list[Phase]:
    """The run's phases on one time line (see the module docstring), in order."""
    t, ends = index.timings, index.timing_ends or {}
    out: list[Phase] = []
    before = t.get("before_run_seconds") or 0.0
    if t.get("startup_seconds"):
        out.append(Phase("start-up: interpreter, airctl's imports, arguments", t["startup_seconds"],
                         -t["startup_seconds"] - before))
    if before:
        out.append(Phase("the command before its run: the model, pass file and run it names", before, -before))
    points = sorted((s.entry.elapsed, s.name, s.graph_id) for s in index.stages() if s.entry.elapsed is not None)
    spans = sorted((ends[k] - t[k], ends[k], k) for k in t if k in ends and k != "total_seconds")
    last_end = 0.0
    for start, end, key in spans:
        start = max(start, last_end)  # a span inside another is not counted twice
        if end <= start:
            continue
        inside = [p for p in points if start < p[0] <= end]
        at, graph = start, None
        for elapsed, stage, graph in inside:
            out.append(Phase(_stage_phase(stage, graph), max(0.0, elapsed - at), at, graph))
            at = elapsed
        name = SPANS.get(key, key.removesuffix("_seconds"))
        if name is None:
            name = _TAIL.get(key, key).format(graph=graph or "?") if inside else key.removesuffix("_seconds")
        out.append(Phase(name, max(0.0, end - at), at, graph))
        last_end = max(last_end, end)
    total = t.get("total_seconds")
    if total is not None and spans and total > last_end:
        out.append(Phase("finish: verdicts, log, report.html", total - last_end, last_end))
    return out


def phase_table(index: RunIndex) -> dict[str, Any]:
    """``{"wall_seconds", "attributed_seconds", "share", "rows": [{phase, seconds, count}],
    "unattributed_seconds"}``: phases of one name summed (a pass run for every graph is one row)."""
    rows: dict[str, dict[str, Any]] = {}
    found = phases(index)
    for p in found:
        row = rows.setdefault(p.name, {"phase": p.name, "seconds": 0.0, "count": 0, "start": round(p.start, 3)})
        row["seconds"] += p.seconds
        row["count"] += 1
    attributed = sum(p.seconds for p in found)
    t = index.timings
    wall = (t.get("total_seconds") or 0.0) + (t.get("startup_seconds") or 0.0) + (t.get("before_run_seconds") or 0.0)
    for row in rows.values():
        row["seconds"] = round(row["seconds"], 3)
    unattributed = max(0.0, wall - attributed)
    return {"run": index.run_id, "command": index.command, "wall_seconds": round(wall, 3),
            "attributed_seconds": round(attributed, 3), "unattributed_seconds": round(unattributed, 3),
            "share": round(attributed / wall, 4) if wall else None, "rows": list(rows.values()),
            "timeline": [{"phase": p.name, "start": round(p.start, 4), "seconds": round(p.seconds, 4),
                          "graph": p.graph} for p in found],
            "recorded": bool(index.timing_ends)}

"""The rules that need a whole run (R16 stream budget, R18 waits a later pass may move, R21 stale
replay), from its index and graphs.

A run's ``captures`` (npugraph_ex's captures, recaptures and stale replays, recorded while the model
ran; R16 and R21 read nothing in a run without them), each graph's checked stage (``fx-final``, else
its last FX stage: the stage ``airctl check`` reads) and, for R18, the names of the passes that ran
after it and the graph that runs (the last FX stage) are all these rules need. Two callers, one function, so
they agree: the end of every run (``compile``, ``passes apply``, ``profile``, ``airctl run``:
:mod:`airctl.pipeline.run.finish`, whose findings ``show`` and ``report.html`` print) and
``airctl check`` on a ledger (:func:`airctl.verify.inputs.ledger_targets`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airctl.graph.model import Graph
from airctl.ledger.defaults import Request, default_stage
from airctl.ledger.index import RunIndex, StageRef
from airctl.verify.budgets import budget_findings, budget_line
from airctl.verify.findings import Finding
from airctl.verify.movable_waits import movable_wait_findings
from airctl.verify.stale_replay import stale_findings


def run_findings(index: RunIndex, load: Callable[[StageRef], Graph], *, device: str | None = None) \
        -> list[tuple[str, Finding]]:
    """(stage name, finding) for R16, R18 (waits a later pass may move) and R21 over the run ``index``
    describes; ``load`` reads a stage."""
    mode = index.run_mode
    if not mode:
        return []
    rows: list[dict[str, Any]] = [dict(r) for r in index.captures or []]
    graphs, stages = _checked_graphs(index, load)
    found: list[Finding] = []
    for gid, graph in graphs.items():
        entry, ref = index.graph(gid), stages[gid]
        if entry is not None and ref is not None:
            found += movable_wait_findings(entry, ref, graph, entry.graph_mode or mode, load)
    if rows:  # R16 and R21 count what the run's captures hold: none, nothing to read
        found += budget_findings(graphs, _captures(rows), mode, device) + stale_findings(rows, graphs, mode)
    for f in found:
        f.mode = mode if mode.is_npugraph_ex else f.mode
    return [(_made_by(index, f) or (stages[f.graph].name if f.graph in stages else ""), f) for f in found]


def _made_by(index: RunIndex, finding: Finding) -> str | None:
    """``after:<pass>`` (as verify-each names stages) of the pass that inserted the finding's first node
    (a YAML pass's ``inserted``), if one did."""
    entry = index.graph(finding.graph or "")
    if entry is None or not finding.nodes:
        return None
    return next((f"after:{s.name}" for s in entry.stages if finding.nodes[0] in (s.inserted or [])), None)


def ledger_budget_line(root: Path | str, device: str | None = None) -> str | None:
    """``airctl show``'s line of the run's stream and event counts (None: no side stream, or no ledger)."""
    from airctl.ledger.reader import Ledger

    try:
        ledger = Ledger.open(root)
        mode = ledger.index.run_mode
        if not mode or not ledger.index.captures:
            return None
        graphs, _ = _checked_graphs(ledger.index, ledger.load)
        return budget_line(graphs, _captures([dict(r) for r in ledger.index.captures or []]), mode, device)
    except Exception:  # a summary line never breaks the summary
        return None


def _captures(rows: list[dict[str, Any]]) -> Counter[str]:
    return Counter(str(r.get("graph")) for r in rows if r.get("event") in ("capture", "recapture"))


def _checked_graphs(index: RunIndex, load: Callable[[StageRef], Graph]) -> tuple[dict[str, Graph], dict[str, StageRef]]:
    """Each graph's checked stage (what ``airctl check`` reads), and which stage that is."""
    graphs: dict[str, Graph] = {}
    stages: dict[str, StageRef] = {}
    for entry in index.graphs or []:
        ref = default_stage(index, Request.CHECK, entry.id)
        if ref is None or ref.entry.dialect != "fx":
            continue
        try:
            graphs[entry.id] = load(ref)
        except Exception:  # an unreadable stage is the reader's error to report, not this rule's
            continue
        stages[entry.id] = ref
    return graphs, stages

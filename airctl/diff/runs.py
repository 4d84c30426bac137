"""Two runs against each other: pair their graphs and stages by name and diff every pair.

``airctl diff RUN_A RUN_B`` answers "what did my pass file change", for the same model compiled
twice (without and with passes, or with two versions of a pass file). Graphs pair by id
(``1-inference``), stages by name within a graph (the k-th stage of a name with the k-th, so a
pass that runs twice pairs twice). A stage only one run has (``yaml:<pass>``, the stages of a
pass that only one pass file declares) is listed, not diffed. A stage whose two snapshot files
are byte-identical is ``same`` without a diff; the others are diffed (:func:`diff_graphs`) and
are ``same`` when the diff is empty (renames alone are not a difference), else ``differs``.
Order: run A's stages, with B's own stages placed after the stage they follow in B.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.diff.report import DiffReport, diff_graphs
from airctl.errors import GraphReadError
from airctl.graph.model import Graph
from airctl.io.compressed import MAX_INFLATED
from airctl.ledger.index import StageRef
from airctl.ledger.reader import Ledger
from airctl.safe_files import read_regular

SAME, DIFFERS, ONLY_A, ONLY_B = "same", "differs", "only_a", "only_b"


@dataclass
class StageDiff:
    name: str
    status: str  # same | differs | only_a | only_b
    report: DiffReport | None = None  # differs (and same when renames were found)
    graphs: tuple[Graph, Graph] | None = field(default=None, repr=False)  # the pair, for the HTML view

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "status": self.status}
        if self.status == DIFFERS and self.report is not None:
            out["diff"] = self.report.to_json()
        return out


@dataclass
class GraphDiff:
    id: str
    status: str  # both | only_a | only_b
    stages: list[StageDiff] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "stages": [s.to_json() for s in self.stages]}


@dataclass
class RunsDiff:
    a: dict[str, Any]  # {"run", "run_id", "mode", "passes"}
    b: dict[str, Any]
    graphs: list[GraphDiff] = field(default_factory=list)

    def stages(self, status: str | None = None) -> list[tuple[str, StageDiff]]:
        return [(g.id, s) for g in self.graphs for s in g.stages if status is None or s.status == status]

    def summary(self) -> dict[str, int]:
        counts = Counter(s.status for _, s in self.stages())
        return {"graphs": len(self.graphs), "stages": sum(counts.values()), "differ": counts[DIFFERS],
                "same": counts[SAME], "only_a": counts[ONLY_A], "only_b": counts[ONLY_B]}

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "summary": self.summary(), "graphs": [g.to_json() for g in self.graphs]}


def diff_runs(a: Path, b: Path) -> RunsDiff:
    """Diff ledger ``b`` against ledger ``a``, stage by stage (see the module docstring)."""
    la, lb = Ledger.open(a), Ledger.open(b)
    for ledger in (la, lb):  # a run with no graph is nothing to compare: every stage "only in" the other
        if not ledger.stages():
            raise ledger.no_stages()
    out = RunsDiff(_describe(la), _describe(lb))
    ids_b = lb.graph_ids()
    for gid in la.graph_ids():
        if gid in ids_b:
            out.graphs.append(GraphDiff(gid, "both", _stages(la, lb, gid)))
        else:
            out.graphs.append(GraphDiff(gid, ONLY_A, [StageDiff(s.name, ONLY_A) for s in la.stages(gid)]))
    ids_a = set(la.graph_ids())
    out.graphs += [GraphDiff(gid, ONLY_B, [StageDiff(s.name, ONLY_B) for s in lb.stages(gid)])
                   for gid in ids_b if gid not in ids_a]
    return out


def _describe(ledger: Ledger) -> dict[str, Any]:
    index, mode = ledger.index, ledger.index.run_mode
    return {"run": str(ledger.root), "run_id": index.run_id, "mode": mode.value if mode else None,
            "passes": index.passes}


def _keyed(stages: list[StageRef]) -> list[tuple[tuple[str, int], StageRef]]:
    """Each stage keyed by (name, how many stages of that name came before it)."""
    seen: Counter[str] = Counter()
    out = []
    for stage in stages:
        out.append(((stage.name, seen[stage.name]), stage))
        seen[stage.name] += 1
    return out


def _stages(la: Ledger, lb: Ledger, gid: str) -> list[StageDiff]:
    keyed_a, keyed_b = _keyed(la.stages(gid)), _keyed(lb.stages(gid))
    in_a = {k for k, _ in keyed_a}
    by_key_b = {k: (pos, s) for pos, (k, s) in enumerate(keyed_b)}
    out: list[StageDiff] = []
    next_b = 0  # B's own stages before this position are placed already
    for key, stage_a in keyed_a:
        found = by_key_b.get(key)
        if found is None:
            out.append(StageDiff(stage_a.name, ONLY_A))
            continue
        pos, stage_b = found
        out += [StageDiff(s.name, ONLY_B) for k, s in keyed_b[next_b:pos] if k not in in_a]
        next_b = max(next_b, pos + 1)
        out.append(_pair(la, lb, stage_a, stage_b))
    out += [StageDiff(s.name, ONLY_B) for k, s in keyed_b[next_b:] if k not in in_a]
    return out


def _pair(la: Ledger, lb: Ledger, stage_a: StageRef, stage_b: StageRef) -> StageDiff:
    path_a, path_b = la.stage_path(stage_a), lb.stage_path(stage_b)
    raw = [read_regular(p, MAX_INFLATED, error=GraphReadError) for p in (path_a, path_b)]  # a FIFO: refused
    if raw[0] == raw[1]:
        return StageDiff(stage_a.name, SAME)
    old, new = la.load(stage_a), lb.load(stage_b)
    report = diff_graphs(old, new)
    return StageDiff(stage_a.name, SAME if report.empty else DIFFERS, report, (old, new))

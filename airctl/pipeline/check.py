"""``airctl check PATH``: load the graphs PATH names and run the static verifier on each.

PATH is any SOURCE (:mod:`airctl.pipeline.source`: nothing or ``--run`` for a run, a run id, a
ledger folder, a graph file, a TorchAir dump or DEBUG log, a model script, compiled first). Each
graph is checked in the mode asked for, else the one its ledger ran in, else max-autotune; GE
graphs are always max-autotune's. The command renders the :class:`CheckOutcome`; ``to_json()`` is
what ``--json`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl.graph.model import is_stream_op
from airctl.modes import Mode
from airctl.pipeline.target import EveryMode
from airctl.verify.findings import Finding, count, summary_json

RACE = "race_cross_stream_without_wait"


@dataclass
class CheckedGraph:
    label: str  # file, or ledger graph/stage
    mode: Mode | None  # the mode it was checked under; None: the run's predicted plan (memory_increase)
    findings: list[Finding]


@dataclass
class CheckOutcome:
    graphs: list[CheckedGraph]

    @property
    def findings(self) -> list[Finding]:
        return [f for g in self.graphs for f in g.findings]

    def count(self, severity: str) -> int:
        return count(self.findings, severity)

    def to_json(self) -> dict[str, Any]:
        return summary_json(self.findings)


def check_source(path: Path | str | None, *, mode: Mode | None = None, stage: str | None = None,
                 passes: Path | str | None = None, run: str | None = None,
                 runs_dir: Path = Path("airctl-runs"), max_memory_increase: str | None = None,
                 every: EveryMode | None = None) -> CheckOutcome:
    """Verify every graph ``path`` names (None: the current run, or ``run``); ``mode`` None: each
    graph's own mode (see the module doc)."""
    from airctl.pipeline.source import GRAPHS, check_targets, resolve_source
    from airctl.verify.namespaces import as_plan_in
    from airctl.verify.verifier import verify

    source = resolve_source(path, run, out_dir=runs_dir, accepts=GRAPHS)
    if is_multi_rank(source.path):
        return check_ranks_ledger(source.path, mode=mode, stage=stage)
    checked = []
    fix = _race_hint(source.path)
    for target in check_targets(source, stage=stage, passes=passes, mode=mode, runs_dir=runs_dir, every=every):
        used = Mode.MAX_AUTOTUNE if target.graph.dialect == "ge" else mode or target.mode or _ops_mode(target.graph)
        # a ledger's graph checked under another mode than its own: the plan there, as `passes apply` counts it
        findings = as_plan_in(verify(target.graph, used), used, target.mode) + list(target.findings)
        for f in findings:
            f.graph = target.label
            if f.rule == RACE and len(f.nodes) >= 2 and (hint := fix(f.nodes[0], f.nodes[1])) is not None:
                f.hint = hint
        checked.append(CheckedGraph(target.label, used, findings))
    if max_memory_increase is not None:
        checked.append(_memory(source.path, max_memory_increase))
    return CheckOutcome(checked)


def _memory(path: Path, limit: str) -> CheckedGraph:
    """The ``memory_increase`` rule, for a run's ledger (docs/memory.md)."""
    from airctl.errors import AirctlError
    from airctl.ledger.reader import Ledger
    from airctl.pipeline.check_memory import memory_findings, parse_limit

    parse_limit(limit)  # a bad limit is refused whatever PATH is
    if not (Path(path).is_dir() and Ledger.is_ledger(path)):
        raise AirctlError("--max-memory-increase needs a run (a ledger): it predicts the run's plan's memory",
                          hint="airctl check RUN --max-memory-increase 10%")
    return CheckedGraph("memory (predicted)", None, memory_findings(Path(path), limit))


def _race_hint(path: Path) -> Any:
    """A function of a race (producer, consumer) giving its hint for the run at ``path``: the passes
    ``airctl passes fix`` writes that close it (None for a source that is not a run's ledger, or a race
    no wait closes), the plan worked out once, on first use."""
    from airctl.ledger.reader import Ledger

    if not (Path(path).is_dir() and Ledger.is_ledger(path)):
        return lambda producer, consumer: None
    from airctl.pipeline.fix import FIX_HINT, fix_preview

    preview = fix_preview(Path(path))

    def hint(producer: str, consumer: str) -> str | None:
        text = preview((producer, consumer))
        return f"{FIX_HINT}\n{text}" if text else None

    return hint


def _ops_mode(graph: Any) -> Mode:
    """A file that does not say its mode: npugraph_ex when its stream ops are all npugraph_ex's
    (only that compiler reads them), else max-autotune."""
    spaces = {op.split(".")[0] for op in {n.op for n in graph.nodes} if is_stream_op(op)}  # each op once
    return Mode.NPUGRAPH_EX if spaces == {Mode.NPUGRAPH_EX.stream_namespace} else Mode.MAX_AUTOTUNE


def is_multi_rank(path: Path | str) -> bool:
    """A multi-rank run's top ledger (its graphs are in ``ranks/<rank>/``)."""
    from airctl.ledger.reader import Ledger

    return Path(path).is_dir() and Ledger.is_ledger(path) and Ledger.open(path).index.is_multi_rank


def check_ranks_ledger(top: Path, *, mode: Mode | None = None, stage: str | None = None) -> CheckOutcome:
    """Each rank's graphs (labels ``rank <r>/<graph>/<stage>``), then the ranks against each other
    (rule ``rank_divergence``, :mod:`airctl.verify.ranks`)."""
    from airctl.ledger.reader import Ledger
    from airctl.verify.inputs import ledger_targets
    from airctl.verify.ranks import check_ranks
    from airctl.verify.verifier import verify

    index = Ledger.open(top).index
    ranks = [e.rank for e in index.ranks or []]
    checked = []
    used_modes: set[Mode] = set()
    for entry in index.ranks or []:
        if not entry.ledger or not Ledger.is_ledger(top / entry.ledger):
            continue
        for target in ledger_targets(top / entry.ledger, stage):
            used = Mode.MAX_AUTOTUNE if target.graph.dialect == "ge" else mode or target.mode or Mode.MAX_AUTOTUNE
            used_modes.add(used)
            label = f"rank {entry.rank}/{target.label}"
            findings = verify(target.graph, used)
            for f in findings:
                f.graph = label
            checked.append(CheckedGraph(label, used, findings))
    used = mode or (sorted(used_modes)[0] if used_modes else Mode.MAX_AUTOTUNE)
    checked.append(CheckedGraph(f"ranks {', '.join(map(str, ranks))}: collectives compared", used,
                                check_ranks(top, ranks, used)))
    return CheckOutcome(checked)

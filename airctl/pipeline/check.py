"""``airctl check PATH``: load the graphs PATH names and run the static verifier on each.

PATH is a graph file, a ledger folder, a TorchAir dump or a model script (compiled first, see
:func:`airctl.pipeline.source.check_targets`). Each graph is checked in the mode asked for, else
the one its ledger ran in, else max-autotune; GE graphs are always max-autotune's. The command
renders the :class:`CheckOutcome`; ``to_json()`` is what ``--json`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.ledger.runs import resolve_run
from airctl.modes import MAX_AUTOTUNE
from airctl.verify.findings import Finding, count, summary_json


@dataclass
class CheckedGraph:
    label: str  # file, or ledger graph/stage
    mode: str  # the semantics it was checked against
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


def check_source(path: Path | str | None, *, mode: str | None = None, stage: str | None = None,
                 passes: Path | str | None = None, run: str | None = None,
                 runs_dir: Path = Path("airctl-runs")) -> CheckOutcome:
    """Verify every graph ``path`` names (None: the current run, or ``run``); ``mode`` None: each
    graph's own mode (see the module doc)."""
    from airctl.pipeline.source import check_targets
    from airctl.verify.verifier import verify

    if path is None or run is not None:
        if path is not None:
            raise AirctlError("give a PATH or --run, not both", hint="--run picks a run when no PATH is given")
        path = resolve_run(runs_dir, run)
    checked = []
    for target in check_targets(path, stage=stage, passes=passes, mode=mode):
        used = MAX_AUTOTUNE if target.graph.dialect == "ge" else mode or target.mode or MAX_AUTOTUNE
        findings = verify(target.graph, used) + list(target.findings)
        for f in findings:
            f.graph = target.label
        checked.append(CheckedGraph(target.label, used, findings))
    return CheckOutcome(checked)

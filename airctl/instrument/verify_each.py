"""Verify-each: the static verifier after every FX pass (MLIR's ``enableVerifier``), per graph.

:class:`airctl.verify.instrument.VerifyEach` keeps findings by stage for one graph; a run compiles
several graphs (forward and backward, one per graph break) that go through the same passes, so
this instrument keeps one per graph id, taken from the :class:`~airctl.instrument.PassRun`. GE
passes are not verified here (``airctl check`` reads GE stages).
"""

from __future__ import annotations

from typing import Any

from airctl.instrument import PassRun


class VerifyEachGraph:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.by_graph: dict[str, Any] = {}

    def _for(self, run: PassRun) -> Any:
        from airctl.verify.instrument import VerifyEach

        if run.graph_id not in self.by_graph:
            self.by_graph[run.graph_id] = VerifyEach(mode=self.mode)
        return self.by_graph[run.graph_id]

    def before_pass(self, run: PassRun) -> None:
        if run.kind != "ge":
            self._for(run).before_pass(run.name, run.before)

    def after_pass(self, run: PassRun) -> None:
        if run.kind != "ge":
            self._for(run).after_pass(run.name, run.after)

    def after_pass_failed(self, run: PassRun, error: BaseException) -> None:
        if run.kind != "ge":
            self._for(run).after_pass_failed(run.name, run.after, error)

    def rows(self) -> list[dict[str, Any]]:
        """Each finding once, at the first stage of its graph where it appeared."""
        rows = []
        for gid, inst in self.by_graph.items():
            for stage in inst.findings_by_stage:
                for finding in inst.new_findings(stage):
                    row = finding.to_json()
                    row.update(stage=stage, graph=gid)
                    rows.append(row)
        return rows

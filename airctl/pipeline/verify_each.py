"""Verify-each across graphs: one :class:`airctl.verify.instrument.VerifyEach` per captured graph.

The verifier's instrument keys findings by pass name; a run compiles several graphs (forward and
backward, one per graph break) that go through the same passes, so this adapter keeps one
instrument per graph id of the active capture session.
"""

from __future__ import annotations

from typing import Any

from airctl.graph.model import Graph


class VerifyEachGraph:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.by_graph: dict[str, Any] = {}

    def _for_current(self) -> Any:
        from airctl.pipeline.capture import current_session
        from airctl.verify.instrument import VerifyEach

        session = current_session()
        gid = (session.current if session is not None else None) or "graph"
        if gid not in self.by_graph:
            self.by_graph[gid] = VerifyEach(mode=self.mode)
        return self.by_graph[gid]

    def before_pass(self, name: str, graph: Graph) -> None:
        self._for_current().before_pass(name, graph)

    def after_pass(self, name: str, graph: Graph) -> None:
        self._for_current().after_pass(name, graph)

    def after_pass_failed(self, name: str, graph: Graph, error: BaseException) -> None:
        self._for_current().after_pass_failed(name, graph, error)

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

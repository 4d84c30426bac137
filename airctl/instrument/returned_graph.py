"""Returned-graph check (rule R11): a pass that returns a graph instead of mutating ``gm``.

TorchAir ignores a custom pass's return value, so a pass that builds a new GraphModule and returns
it changes nothing. After every FX pass this instrument notes ````run.returned_new_graph```` (the
returned type) and keeps a verifier finding, at the stage where it happened.
"""

from __future__ import annotations

from typing import Any

from airctl.instrument import Instrument, PassRun
from airctl.modes import Mode


class ReturnedGraph(Instrument):
    def __init__(self, mode: Mode) -> None:
        self.mode = mode
        self._rows: list[dict[str, Any]] = []

    def after_pass(self, run: PassRun) -> None:
        from airctl.verify import finding_for_returned_graph

        if run.kind == "ge" or run.result is None or run.result is run.obj:
            return  # GE passes return their bookkeeping; only FX custom passes must return None
        run.returned_new_graph = type(run.result).__name__
        finding = finding_for_returned_graph(run.name, run.result, mode=self.mode,
                                             changed_in_place=run.changed, source=run.info.get("source"))
        if finding is not None:
            row = finding.to_json()
            row.update(stage=run.stage, graph=run.graph_id)
            self._rows.append(row)

    def rows(self) -> list[dict[str, Any]]:
        return list(self._rows)

"""Verify-each: the static verifier after every FX pass (MLIR's ``enableVerifier``), per graph.

:class:`airctl.verify.instrument.VerifyEach` keeps findings by stage for one graph; a run compiles
several graphs (forward and backward, one per graph break) that go through the same passes, so
this instrument keeps one per graph id, taken from the :class:`~airctl.instrument.PassRun`. GE
passes are not verified here (``airctl check`` reads GE stages).
"""

from __future__ import annotations

from typing import Any

from airctl.instrument import PassRun
from airctl.modes import Mode


class VerifyEachGraph:
    def __init__(self, mode: Mode) -> None:
        self.mode = mode
        self.by_graph: dict[str, Any] = {}
        self.plans: dict[str, Any] = {}  # graph id -> the graph after its last YAML pass

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
        if run.kind == "yaml" and run.after is not None:
            self.plans[run.graph_id] = run.after

    def after_pass_failed(self, run: PassRun, error: BaseException) -> None:
        if run.kind != "ge":
            self._for(run).after_pass_failed(run.name, run.after, error)

    def rows(self) -> list[dict[str, Any]]:
        """The final stage's findings (at the stage each first appeared), then the fixed ones
        (``fixed_by``), then the plan's errors under the other modes (``other_mode``)."""
        rows: list[dict[str, Any]] = []
        fixed_rows: list[dict[str, Any]] = []
        for gid, inst in self.by_graph.items():
            final, fixed = inst.verdict()
            rows.extend({**f.to_json(), "stage": stage, "graph": gid} for stage, f in final)
            fixed_rows.extend({**f.to_json(), "stage": stage, "graph": gid,
                               "fixed_by": by.removeprefix("after:").removeprefix("failed:")}
                              for stage, f, by in fixed)
        return rows + fixed_rows + self._other_modes()

    def _other_modes(self) -> list[dict[str, Any]]:
        from airctl.verify.namespaces import as_plan_in
        from airctl.verify.verifier import verify

        rows: list[dict[str, Any]] = []
        for gid, graph in self.plans.items():
            for mode in Mode:
                if mode == self.mode:
                    continue
                try:
                    found = as_plan_in(verify(graph, mode), mode, self.mode)
                except Exception:  # a debugging aid never breaks the compile (style.md §9)
                    continue
                rows.extend({**f.to_json(), "graph": gid, "stage": "plan", "other_mode": mode.value} for f in found
                            if f.severity == "error")
        return rows

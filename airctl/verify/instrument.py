"""Verify-each: run the verifier after every pass and remember which stage broke what.

An instrument in the sense of style.md §7 (MLIR's ``enableVerifier``): the pass runner calls
``before_pass`` / ``after_pass`` / ``after_pass_failed`` around each pass with the airctl graph;
passes never know. Findings are kept per stage name (``before:<pass>`` for the graph the first
pass received, ``after:<pass>``, ``failed:<pass>``), so :meth:`VerifyEach.verdict` can name the
pass that introduced a problem. A verifier crash never breaks the user's compile: it is recorded
as an ``info`` finding instead.

>>> from airctl.graph.model import Graph, Node
>>> inst = VerifyEach("max-autotune")
>>> g = Graph("g", "fx", [Node("x", "placeholder", kind="placeholder"), Node("output", "output", ["x"], kind="output")])
>>> inst.before_pass("p", g); inst.after_pass("p", g)
>>> list(inst.findings_by_stage), inst.verdict()
(['before:p', 'after:p'], ([], []))
"""

from __future__ import annotations

from airctl.graph.model import Graph
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.verifier import verify


class VerifyEach:
    def __init__(self, mode: Mode = Mode.MAX_AUTOTUNE) -> None:
        self.mode = Mode.parse(mode)
        self.findings_by_stage: dict[str, list[Finding]] = {}

    def _run(self, stage: str, graph: Graph) -> None:
        try:
            findings = verify(graph, self.mode)
        except Exception as e:  # a debugging aid never breaks the compile (style.md §9)
            findings = [Finding("verifier_failed", "info", self.mode, f"the verifier failed on this graph: {e!r}")]
        for f in findings:
            f.graph = stage
        self.findings_by_stage[stage] = findings

    def before_pass(self, name: str, graph: Graph) -> None:
        if not self.findings_by_stage:  # the input of the first pass: tells "already broken" apart
            self._run(f"before:{name}", graph)

    def after_pass(self, name: str, graph: Graph) -> None:
        self._run(f"after:{name}", graph)

    def after_pass_failed(self, name: str, graph: Graph, error: Exception) -> None:
        self._run(f"failed:{name}", graph)

    def verdict(self) -> tuple[list[tuple[str, Finding]], list[tuple[str, Finding, str]]]:
        """The run's one verdict: the findings of the last stage (the graph that runs), each with the
        stage where it first appeared; and the findings of earlier stages that a later pass removed,
        each with that stage and the stage that fixed it (``after:<pass>``).

        A stream plan is inserted pass by pass (a scope, then the wait that orders it), so the stage
        between them races; only the final graph's findings are the run's errors.
        """
        present: dict[tuple[str, tuple[str, ...]], tuple[str, Finding]] = {}
        fixed: list[tuple[str, Finding, str]] = []
        for stage, findings in self.findings_by_stage.items():
            now = {(f.rule, tuple(f.nodes)): f for f in findings}
            for key in [k for k in present if k not in now]:
                introduced, finding = present.pop(key)
                fixed.append((introduced, finding, stage))
            for key, finding in now.items():  # the stage it appeared at, the words of the latest stage
                present[key] = (present[key][0] if key in present else stage, finding)  # (aten.reshape, not view)
        return list(present.values()), fixed

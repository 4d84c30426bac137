"""``verify(graph, mode)``: run every rule that applies to the graph's dialect under one mode.

The entry point shared by ``airctl check``, the verify-each instrument and the ledger. It needs
only the graph model (no torch), and is linear in the graph: one scope walk, one vector-clock walk,
one cycle test (see :mod:`airctl.verify.happens_before`).

>>> from airctl.graph.model import Node
>>> g = Graph("g", "fx", [Node("x", "placeholder", kind="placeholder"),
...                       Node("w", "air.wait.default", inputs=[], attrs={"args": [[]]}, kind="call_function"),
...                       Node("output", "output", inputs=["x"], kind="output")])
>>> [(f.rule, f.severity) for f in verify(g, "max-autotune")]
[('wait_dropped_at_tail', 'error'), ('wait_on_unknown_record', 'error')]
"""

from __future__ import annotations

import re

from airctl.graph.model import Graph
from airctl.io.gc_pause import gc_paused
from airctl.modes import Mode
from airctl.verify.capture_checks import capture_checks
from airctl.verify.cycles import deadlock_findings, fx_dependencies
from airctl.verify.findings import SEVERITIES, Finding
from airctl.verify.fx_checks import FxStructure
from airctl.verify.ge_checks import check_ge
from airctl.verify.happens_before import HappensBefore
from airctl.verify.namespaces import foreign_stream_ops
from airctl.verify.plan import FxPlan, build_plan
from airctl.verify.scope_values import similar_label_findings


def verify(graph: Graph, mode: Mode = Mode.MAX_AUTOTUNE) -> list[Finding]:
    """All findings for ``graph`` under ``mode``, errors first, then in node order. npugraph_ex follows
    aclgraph's rules (reference/torchair.md §2.2) and reads only its own op namespace; its findings
    say ``npugraph_ex``."""
    asked = Mode.parse(mode)
    mode = asked.semantics
    with gc_paused():  # many small acyclic objects (airctl/io/gc_pause.py)
        if graph.dialect == "ge":
            findings = check_ge(graph)  # GE graphs exist only in max-autotune
        else:
            plan = build_plan(graph, mode)
            findings = capture_checks(plan, _verify_fx(plan) + foreign_stream_ops(graph, asked, plan.ops))
        findings.extend(similar_label_findings(graph, Mode.MAX_AUTOTUNE if graph.dialect == "ge" else mode))
    if not findings:
        return findings
    if asked.is_npugraph_ex:
        for f in findings:
            _say_npugraph_ex(f)
    position = {n.name: i for i, n in enumerate(graph.nodes)}
    rank = {s: i for i, s in enumerate(SEVERITIES)}

    def key(f: Finding) -> tuple[int, int, str]:
        first = min((position.get(n, len(position)) for n in f.nodes), default=len(position))
        return rank.get(f.severity, 9), first, f.rule

    return sorted(findings, key=key)


def _say_npugraph_ex(finding: Finding) -> None:
    """A finding under npugraph_ex names its mode and its ops (``npugraph_ex.record()``, not ``air.record()``)."""
    finding.mode = Mode.NPUGRAPH_EX
    finding.message = finding.message.replace("reduce-overhead adds", "npugraph_ex (aclgraph) adds")
    if finding.hint and finding.rule != "foreign_stream_ops":
        finding.hint = re.sub(r"(?<![\w.])air\.", "npugraph_ex.", finding.hint)


def _verify_fx(plan: FxPlan) -> list[Finding]:
    graph, mode = plan.graph, plan.mode
    structure = FxStructure(plan)
    findings = structure.run()
    clocks = HappensBefore(plan, structure.dropped_records)
    races = clocks.run()  # the walk also says whether some node uses a later one: only then can a cycle exist
    cycles = deadlock_findings(graph, fx_dependencies(graph, plan.stream), mode) if clocks.backward else []
    # clocks over a cyclic order would only add noise to the deadlock finding
    findings.extend(cycles or races)
    return findings

"""What the verifier reports: one :class:`Finding` per problem, with a stable ``to_json()``.

Findings are plain data so the CLI (``airctl check``), the verify-each instrument and the ledger
can all carry them without knowing the checks that made them.

>>> f = Finding("wait_dropped_at_tail", "error", "max-autotune", "wait_default has no op after it",
...             nodes=["wait_default"], ref="R8")
>>> f.to_json()["rule"], f.ref
('wait_dropped_at_tail', 'R8')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airctl.modes import Mode

__all__ = ["SEVERITIES", "Finding", "count", "finding_for_returned_graph", "summary_json"]

SEVERITIES = ("error", "warning", "info")


@dataclass
class Finding:
    rule: str  # rule id from airctl.verify.rules.RULES
    severity: str  # error | warning | info
    mode: Mode  # the mode whose semantics produced it
    message: str
    nodes: list[str] = field(default_factory=list)  # involved nodes, most relevant first
    source: str | None = None  # "file:line" of the user code behind the first node, where known
    hint: str | None = None
    ref: str | None = None  # reference/torchair.md §2.3 rule (R1..R15) where one applies
    graph: str | None = None  # which graph / stage it was found in (set by callers that check several)

    def __post_init__(self) -> None:
        self.mode = Mode.parse(self.mode)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "mode": self.mode.value,
            "nodes": list(self.nodes),
            "source": self.source,
            "message": self.message,
            "hint": self.hint,
            "ref": self.ref,
            "graph": self.graph,
        }


def count(findings: list[Finding], severity: str) -> int:
    return sum(1 for f in findings if f.severity == severity)


def summary_json(findings: list[Finding]) -> dict[str, Any]:
    """The ``airctl check --json`` document."""
    return {
        "findings": [f.to_json() for f in findings],
        "errors": count(findings, "error"),
        "warnings": count(findings, "warning"),
        "infos": count(findings, "info"),
    }


def finding_for_returned_graph(pass_name: str, returned: object, *, mode: Mode = Mode.MAX_AUTOTUNE,
                               changed_in_place: bool | None = None, source: str | None = None) -> Finding | None:
    """R11 for the pass runner: a custom pass returned something instead of ``None``.

    TorchAir ignores the return value of ``fn(gm, example_inputs, config)``, so a pass that builds
    a new GraphModule and returns it changes nothing. ``changed_in_place`` (from the runner's
    fingerprints) sharpens the message: False means every change of the pass was lost.
    """
    if returned is None:
        return None
    kind = type(returned).__name__
    if changed_in_place is False:
        message = (f"pass {pass_name!r} returned a {kind} and left gm unchanged: TorchAir ignores the return "
                   f"value, so none of its changes reach the compiled graph (R11)")
        severity = "error"
    else:
        message = f"pass {pass_name!r} returned a {kind}; TorchAir ignores the return value (R11)"
        severity = "error" if changed_in_place is None else "warning"
    return Finding("pass_returned_new_graph", severity, mode, message, nodes=[], source=source,
                   hint="mutate gm.graph in place (then gm.recompile()) and return None", ref="R11", graph=pass_name)

"""Findings only a TorchAir DEBUG log can show: what happened around a custom pass.

A custom pass that builds a new GraphModule and returns it changes nothing (TorchAir ignores the
return value, R11). ``airctl compile`` sees the return value; in a log only its effect is left:
TorchAir lists the graph before and after each custom pass (``[forward] before
[post_grad_custom_pre_pass] execution, graph is graph():``), and the two listings are equal.
A pass that legitimately found nothing to do looks the same, so this is a warning.
"""

from __future__ import annotations

from airctl.errors import GraphReadError
from airctl.io.fx_listing import parse_fx_listing
from airctl.io.torchair_log import CUSTOM_PASSES, LogUnit
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.rules import make_finding


def log_findings(unit: LogUnit, origin: str, mode: Mode) -> list[Finding]:
    findings: list[Finding] = []
    for name in CUSTOM_PASSES:
        before, after = unit.listing(f"before:{name}"), unit.listing(f"after:{name}")
        if before is None or after is None:
            continue
        try:
            same = parse_fx_listing(before.text, origin).structure() == parse_fx_listing(after.text, origin).structure()
        except GraphReadError:
            continue
        if not same:
            continue
        f = make_finding("pass_returned_new_graph", mode,
                         f"{origin}:{after.line}: the custom pass {name} left {unit.name or 'the graph'} unchanged: "
                         f"a pass that returns a new graph instead of editing gm in place looks exactly like this "
                         f"(TorchAir ignores the return value, R11)", [], severity="warning")
        if f is not None:
            f.source = f"{origin}:{after.line}"
            findings.append(f)
    return findings

"""The graph-level rules of capture safety and device budgets (R17-R20), as one step of ``verify``.

:func:`airctl.verify.verifier.verify` hands every FX graph's plan and findings here, so ``check``,
verify-each (``compile``, ``passes apply``, ``profile``, ``airctl run``), ``show`` and ``report.html``
all see the same findings. The run-level rules (R16 stream budget, R21 stale replay) need a run's
captures: :mod:`airctl.verify.run_checks`.
"""

from __future__ import annotations

from airctl.verify.capture_unsafe import capture_unsafe_findings
from airctl.verify.copy_streams import copy_findings
from airctl.verify.core_limits import core_limit_findings
from airctl.verify.findings import Finding
from airctl.verify.moved_waits import moved_wait_findings
from airctl.verify.plan import FxPlan


def capture_checks(plan: FxPlan, findings: list[Finding]) -> list[Finding]:
    """``findings`` (races on a copy renamed, R19) and the findings of R17, R18 and R20 on ``plan``."""
    out = copy_findings(plan.graph, findings)
    out.extend(capture_unsafe_findings(plan.graph, plan.mode, plan.ops))
    out.extend(moved_wait_findings(plan))
    out.extend(core_limit_findings(plan, plan.mode))
    return out

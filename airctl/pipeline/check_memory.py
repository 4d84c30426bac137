"""``airctl check --max-memory-increase LIMIT``: a stream plan that raises the predicted device memory peak
beyond LIMIT (bytes, or a percentage of the single-stream plan's peak), as a finding naming the tensors
whose lives the plan stretched (rule ``memory_increase``, off by default; docs/memory.md).

Each graph's plan is replayed with the estimate's times (shapes against the default device) and its
memory predicted (:mod:`airctl.predict.memory`), then the same graph on one stream; the difference of
the two peaks is what the plan costs.
"""

from __future__ import annotations

from pathlib import Path

from airctl.errors import AirctlError
from airctl.verify.findings import Finding
from airctl.verify.rules import RULES

RULE = "memory_increase"


def parse_limit(text: str) -> tuple[float | None, int | None]:
    """``"10%"`` -> (10.0, None); ``"1MiB"`` / ``"1048576"`` -> (None, 1048576)."""
    from airctl.pipeline.suggest_memory import parse_budget

    raw = (text or "").strip()
    if raw.endswith("%") and not raw.startswith("+"):
        raw = "+" + raw
    try:
        budget = parse_budget(raw)
    except AirctlError:
        raise AirctlError(f"--max-memory-increase {text!r} is not a size or a percentage",
                          hint="give bytes (1MiB, 2G) or a percentage of the single-stream peak (10%)") from None
    return budget.over_pct, budget.bytes


def memory_findings(ledger_dir: Path, limit: str) -> list[Finding]:
    """The ``memory_increase`` findings of the run in ``ledger_dir`` (one per graph over the limit)."""
    from airctl.ledger.reader import Ledger
    from airctl.pipeline.predict import ledger_plans, single_stream
    from airctl.pipeline.predict_times import load_timing
    from airctl.predict.memory import memory_delta, predict_memory
    from airctl.predict.step import Conditions, price

    pct, allowed = parse_limit(limit)
    ledger = Ledger.open(ledger_dir)
    plans, fx_graphs = ledger_plans(ledger)
    table = load_timing("estimate", ledger_dir, fx_graphs, None).table
    out = []
    for plan in plans:
        one = single_stream(plan)
        resolved = table.resolve(plan)
        mems = [predict_memory(p, price(p, resolved.durations_us, resolved.cores, Conditions()).replayed)
                for p in (one, plan)]
        delta = memory_delta(*mems)
        over = delta["delta_bytes"] - (allowed if allowed is not None else
                                       int(delta["single_stream_peak_bytes"] * (pct or 0.0) / 100))
        if over <= 0:
            continue
        grew = delta["grew"]
        named = ", ".join(f"{g['tensor']} ({g['bytes']} B, until {g.get('until') or 'the end'})" for g in grew[:4])
        rule = RULES[RULE]
        out.append(Finding(RULE, "error", plan.mode,
                           f"the plan raises the predicted peak by {delta['delta_bytes']} bytes "
                           f"({delta['single_stream_peak_bytes']} → {delta['peak_bytes']}), {over} over "
                           f"--max-memory-increase {limit}" + (f": lives stretched: {named}" if named else ""),
                           nodes=[g["tensor"] for g in grew], hint=rule.hint, graph=f"{plan.graph}/{plan.stage}"))
    return out

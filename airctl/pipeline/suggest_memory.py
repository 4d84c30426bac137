"""``passes suggest --memory-budget BYTES|+PCT``: a plan whose predicted device memory stays within a budget.

A stream plan buys time with memory (docs/memory.md): a tensor read on another stream lives until the
read is ordered back. The search finds the fastest plan; when its predicted peak (the memory model of
:mod:`airctl.predict.memory` on the searched graph, the plan's replay) is over the budget, regions are
moved back to the main stream one at a time — each time the one that costs the least step time per
byte it frees — until the peak fits. What the budget cost is the difference between the two steps.
The budget is bytes (``512MiB``, ``2G``, ``1000000``) or a share over the single-stream peak (``+10%``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from airctl.errors import AirctlError
from airctl.predict import candidate as cd
from airctl.predict import suggest as sg
from airctl.predict.memory import predict_memory
from airctl.predict.plan import ReplayPlan
from airctl.predict.regions import Region

UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1000, "kib": 1 << 10, "m": 1 << 20, "mb": 1000 ** 2, "mib": 1 << 20,
         "g": 1 << 30, "gb": 1000 ** 3, "gib": 1 << 30}
_BUDGET = re.compile(r"^\s*(?:(?P<plus>\+)\s*(?P<pct>\d+(?:\.\d+)?)\s*%?"
                     r"|(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[a-zA-Z]*))\s*$")
HINT = "--memory-budget takes bytes (512MiB, 2G, 1000000) or a share over the single-stream peak (+10%)"


@dataclass(frozen=True)
class Budget:
    bytes: int | None = None  # an absolute peak
    over_pct: float | None = None  # or this much over the single-stream plan's peak

    def limit(self, single_peak: int) -> int:
        return self.bytes if self.bytes is not None else int(single_peak * (1 + (self.over_pct or 0.0) / 100))

    def __str__(self) -> str:
        return f"{self.bytes} bytes" if self.bytes is not None else f"+{self.over_pct:g}% over one stream"


def parse_budget(text: str) -> Budget:
    """``"512MiB"`` -> 512 MiB; ``"+10%"`` -> 10 % over the single-stream peak; anything else: exit 2."""
    m = _BUDGET.match(text or "")
    if m is None or (m.group("num") and m.group("unit").lower() not in UNITS):
        raise AirctlError(f"--memory-budget {text!r} is not a size", hint=HINT)
    if m.group("plus"):
        return Budget(over_pct=float(m.group("pct")))
    return Budget(bytes=int(float(m.group("num")) * UNITS[m.group("unit").lower()]))


def peak_of(plan: ReplayPlan, tm: cd.Times) -> int:
    done = tm.replay(plan)
    return predict_memory(plan, done).peak_bytes


def fit(base: ReplayPlan, dag: Any, regions: list[Region], tm: cd.Times, best: sg.Outcome,
        budget: Budget) -> tuple[sg.Outcome, dict[str, Any]]:
    """The fastest plan within ``budget``, moving regions of ``best`` back one at a time; and what it cost."""
    single = peak_of(cd.build(base, dag, regions, (0,) * len(regions))[0], tm)
    limit = budget.limit(single)
    chosen, peak = best, peak_of(best.plan, tm)
    while peak > limit and any(chosen.assign):
        options = []
        for r, s in enumerate(chosen.assign):
            if s:
                assign = chosen.assign[:r] + (0,) + chosen.assign[r + 1:]
                plan, syncs = cd.build(base, dag, regions, assign)
                after = peak_of(plan, tm)
                step = cd.step_us(plan, tm)
                freed = peak - after
                options.append(((step - chosen.step_us) / freed if freed > 0 else float("inf"), -freed, r,
                                sg.Outcome(assign, step, plan, syncs), after))
        options.sort(key=lambda o: o[:3])
        _, _, _, chosen, peak = options[0]
    return chosen, {"budget": str(budget), "limit_bytes": limit, "single_stream_peak_bytes": single,
                    "fastest_peak_bytes": peak_of(best.plan, tm), "peak_bytes": peak, "within": peak <= limit,
                    "cost_us": chosen.step_us - best.step_us}


def region_costs(base: ReplayPlan, dag: Any, regions: list[Region], tm: cd.Times, best: sg.Outcome) -> dict[int, int]:
    """Per moved region: the peak bytes it adds (the plan's peak less the peak with it back on the main stream)."""
    peak = peak_of(best.plan, tm)
    out = {}
    for r, s in enumerate(best.assign):
        if s:
            assign = best.assign[:r] + (0,) + best.assign[r + 1:]
            out[r] = peak - peak_of(cd.build(base, dag, regions, assign)[0], tm)
    return out

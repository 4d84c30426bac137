"""When the host releases each task of a plan: the host half of the replay (docs/profile.md "Host release").

A device task cannot start before the host launched it. Which launch times a replay uses:

- **the plan a profiler folder measured** (dialect ``profile``): each task's own launch, read from the
  folder's ``HostToDevice`` flows (:mod:`airctl.profile.ascend.launches`); a task without one
  (HCCL's own tasks, a folder without CANN rows) is released at once;
- **another plan, eager or max-autotune**: the host launches every kernel in program order whatever
  its stream, one every ``host_us`` (the folder's median launch interval) — streams change where a
  kernel runs, not when the host reaches it;
- **aclgraph (reduce-overhead, npugraph_ex)**: the captured graph is launched once (the step's
  ``launch_us``) and its tasks are on the device already: no per-task release;
- no ``host_us`` (a CSV or the estimate): the host is never late.
"""

from __future__ import annotations

from statistics import median

from airctl.predict.plan import KERNEL, ReplayPlan


def releases(plan: ReplayPlan, host_us: float | None) -> list[float | None] | None:
    """Per task, when the host has launched it (µs from the step's start); None: never late."""
    if plan.dialect == "profile":
        rel = [t.meta.get("release_us") for t in plan.tasks]
        return rel if any(r is not None for r in rel) else None
    if not host_us or plan.aclgraph:
        return None
    out: list[float | None] = []
    k = 0
    for t in plan.tasks:
        out.append(k * host_us if t.kind == KERNEL else None)
        k += t.kind == KERNEL
    return out


def host_interval_us(plan: ReplayPlan) -> float | None:
    """The median time between two consecutive launches of a measured plan (None: no launches)."""
    rel = sorted(r for t in plan.tasks if (r := t.meta.get("release_us")) is not None)
    gaps = [b - a for a, b in zip(rel, rel[1:], strict=False) if b >= a]
    return median(gaps) if gaps else None


def program_order(plan: ReplayPlan) -> list[int]:
    """The measured plan's tasks in the host's order: by launch where known, else by device start."""
    def key(i: int) -> tuple[float, int]:
        t = plan.tasks[i]
        r = t.meta.get("release_us")
        return (r if r is not None else float(t.meta.get("measured_start_us", 0.0)), i)
    return sorted(range(len(plan.tasks)), key=key)

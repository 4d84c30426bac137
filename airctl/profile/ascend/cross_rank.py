"""Several ranks side by side: which rank is slowest in each step, and how long ranks wait for
each other at collectives.

- **step time** of a rank in a step: from its first task's start to its last task's end (device);
  the **slowest rank** has the longest; ``spread_us`` = slowest − fastest.
- **collectives** are matched across ranks by op type and order within the step (the k-th
  ``hcom_allReduce_`` of step 3 on every rank). A collective cannot finish before its last rank
  arrives, so for each one ``skew`` = last arrival − first arrival, and rank r **waits**
  (last arrival − r's arrival). ``wait_skew_us`` sums the skews of a step; the **late rank** is the
  one the others waited for longest in all (the straggler), None when nobody waited.
- Start times of ranks on different hosts come from different clocks: the skews are then only as
  good as the hosts' clock synchronisation (said in ``clock``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from airctl.profile.ascend.breakdown import StepBreakdown
from airctl.profile.ascend.model import RankData, Task
from airctl.profile.ascend.times import ns_to_us


def _collectives(tasks: list[Task]) -> dict[int, dict[tuple[str, int], int]]:
    """step -> (op type, k-th of that type in the step) -> start ns."""
    out: dict[int, dict[tuple[str, int], int]] = defaultdict(dict)
    seen: Counter[tuple[int, str]] = Counter()
    for t in sorted((t for t in tasks if t.comm), key=lambda t: t.start_ns):
        step = t.step or 0
        seen[(step, t.type)] += 1
        out[step][(t.type, seen[(step, t.type)])] = t.start_ns
    return out


def _top(waited_for: Counter[int]) -> int | None:
    """The rank the others waited for longest; None when nobody waited."""
    best = waited_for.most_common(1)
    return best[0][0] if best and best[0][1] > 0 else None


def cross_rank(ranks: list[tuple[RankData, list[StepBreakdown]]]) -> dict[str, Any]:
    span: dict[int, dict[int, int]] = defaultdict(dict)  # step -> rank -> ns
    comm: dict[int, dict[int, int]] = defaultdict(dict)
    arrivals = {}
    for n, (data, steps) in enumerate(ranks):
        rank = data.rank if data.rank is not None else n
        bounds: dict[int, tuple[int, int]] = {}
        for t in data.tasks:
            if t.is_marker:
                continue
            a, b = bounds.get(t.step or 0, (t.start_ns, t.end_ns))
            bounds[t.step or 0] = (min(a, t.start_ns), max(b, t.end_ns))
        for step, (a, b) in bounds.items():
            span[step][rank] = b - a
        for s in steps:
            comm[s.step][rank] = s.communication
        arrivals[rank] = _collectives(data.tasks)
    rows: list[dict[str, Any]] = []
    slowest: Counter[int] = Counter()
    late: Counter[int] = Counter()
    for step in sorted(span):
        times = span[step]
        worst = max(times, key=lambda r: (times[r], -r))
        slowest[worst] += 1
        waits = dict.fromkeys(times, 0)
        skews: list[int] = []
        step_late: Counter[int] = Counter()
        keys = set.intersection(*(set(arrivals[r].get(step, {})) for r in times)) if len(times) > 1 else set()
        for key in sorted(keys):
            at = {r: arrivals[r][step][key] for r in times}
            last = max(at, key=lambda r: (at[r], -r))
            skews.append(at[last] - min(at.values()))
            late[last] += skews[-1]
            step_late[last] += skews[-1]
            for r in at:
                waits[r] += at[last] - at[r]
        per_rank = [{"rank": r, "step_us": ns_to_us(times[r]), "communication_us": ns_to_us(comm[step].get(r, 0)),
                     "wait_us": ns_to_us(waits[r])} for r in sorted(times)]
        spread = max(times.values()) - min(times.values())
        rows.append({"step": step, "slowest_rank": worst, "spread_us": ns_to_us(spread),
                     "collectives": len(keys), "wait_skew_us": ns_to_us(sum(skews)),
                     "max_wait_skew_us": ns_to_us(max(skews, default=0)), "late_rank": _top(step_late),
                     "per_rank": per_rank})
    hosts = {d.host for d, _ in ranks}
    return {"ranks": sorted(arrivals), "steps": rows,
            "slowest_rank": slowest.most_common(1)[0][0] if slowest else None,
            "late_rank": _top(late),
            "clock": "one host: start times are comparable" if len(hosts) == 1 else
                     f"ranks on {len(hosts)} hosts: skews assume their clocks are synchronised"}

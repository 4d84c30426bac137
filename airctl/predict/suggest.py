"""The stream plan with the shortest predicted step: candidates replayed, the best kept.

Each candidate assignment of regions to streams becomes the plan its pass file produces
(:func:`airctl.predict.candidate.build`), and that plan is replayed: the search compares predicted
steps, not proxies. A candidate whose replay deadlocks, or that would spread the collectives over
more streams than before (they would need an order between them), is refused.

Search (:func:`search`): exhaustive over the canonical assignments (side streams numbered in order
of first use, conflicting regions never both moved, regions with a reason never moved) when there
are at most ``EXHAUSTIVE_MAX`` of them; beyond, steepest descent from the single stream (move one
region to another stream, keep the best move, repeat), reported with its gap to
:func:`lower_bound`. Either way, moved regions whose scope saves under ``IDLE_GAIN`` of the step go
back to the main stream (fewer passes, next to the same step), and a plan that saves less than
``MIN_GAIN`` of the starting step is no plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from airctl.predict.candidate import Syncs, Times, build, collectives_split, step_us
from airctl.predict.plan import ReplayPlan
from airctl.predict.regions import Dag, Region, conflicts
from airctl.predict.replay import ReplayDeadlock
from airctl.predict.selectors import Choice

EXHAUSTIVE_MAX = 2048  # canonical assignments replayed one by one; more: the heuristic
MIN_GAIN = 0.005  # a plan must save 0.5 % of the single-stream step to be worth a file
IDLE_GAIN = 0.001  # a moved region whose scope saves less than 0.1 % of the step goes back


@dataclass
class Outcome:
    assign: tuple[int, ...]
    step_us: float
    plan: ReplayPlan
    syncs: Syncs


@dataclass
class SearchResult:
    best: Outcome
    single_us: float
    lower_bound_us: float
    method: str  # "exhaustive" or "heuristic"
    evaluated: int
    candidates: int | None  # how many canonical assignments exist (None: more than EXHAUSTIVE_MAX)


def assignments(regions: list[Region], k: int, limit: int | None = None) -> Iterator[tuple[int, ...]]:
    """The canonical assignments: side streams numbered by first use, no two conflicting regions
    both moved, regions with a reason always on the main stream."""
    clash = conflicts(regions)
    n = len(regions)
    current = [0] * n
    count = 0

    def walk(i: int, moved: int, used: int) -> Iterator[tuple[int, ...]]:
        nonlocal count
        if limit is not None and count > limit:
            return
        if i == n:
            count += 1
            yield tuple(current)
            return
        current[i] = 0
        yield from walk(i + 1, moved, used)
        if regions[i].reason is None and not clash[i] & moved:
            for s in range(1, min(used + 1, k - 1) + 1):
                current[i] = s
                yield from walk(i + 1, moved | 1 << i, max(used, s))
            current[i] = 0

    yield from walk(0, 0, 0)


def count_assignments(regions: list[Region], k: int, limit: int) -> int | None:
    """How many canonical assignments there are, None when more than ``limit``."""
    total = 0
    for _ in assignments(regions, k, limit):
        total += 1
        if total > limit:
            return None
    return total


def lower_bound(dag: Dag, durations_us: list[float], k: int) -> float:
    """No plan of these tasks beats max(critical path with unlimited streams, total work / K)."""
    longest = [0.0] * len(dag.preds)
    for i, ps in enumerate(dag.preds):
        own = durations_us[i] if dag.kernels >> i & 1 else 0.0
        longest[i] = own + max((longest[p] for p in ps), default=0.0)
    total = sum(d for i, d in enumerate(durations_us) if dag.kernels >> i & 1)
    return max(max(longest, default=0.0), total / max(k, 1))


def search(base: ReplayPlan, dag: Dag, regions: list[Region], times: Times, k: int,
           exhaustive_max: int = EXHAUSTIVE_MAX, force: str | None = None, bound_k: int | None = None) -> SearchResult:
    """The assignment with the shortest predicted step (``force``: "exhaustive" or "heuristic");
    ``bound_k``: the streams the lower bound counts (default ``k``; ``--from``: the plan's too)."""
    cache: dict[tuple[int, ...], Outcome | None] = {}
    memo: dict[Any, Choice] = {}

    def evaluate(assign: tuple[int, ...]) -> Outcome | None:
        if assign not in cache:
            if collectives_split(base, assign, regions):
                cache[assign] = None
            else:
                plan, syncs = build(base, dag, regions, assign, memo)
                try:
                    cache[assign] = Outcome(assign, step_us(plan, times), plan, syncs)
                except ReplayDeadlock:
                    cache[assign] = None
        return cache[assign]

    zero = tuple([0] * len(regions))
    single = evaluate(zero)
    assert single is not None
    total = count_assignments(regions, k, exhaustive_max) if force != "heuristic" else None
    exhaustive = force == "exhaustive" or (force is None and total is not None)
    best = _exhaustive(regions, k, evaluate) if exhaustive else _descend(regions, k, evaluate, zero)
    best = _prefer_fewer(_drop_idle(best, evaluate), single)
    return SearchResult(best, single.step_us, lower_bound(dag, times.durations_us, bound_k or k),
                        "exhaustive" if exhaustive else "heuristic", len(cache), total)


def _better(a: Outcome | None, b: Outcome | None) -> bool:
    """Whether ``a`` beats ``b``: shorter, or as short with fewer moved regions."""
    if a is None:
        return False
    if b is None:
        return True
    if a.step_us < b.step_us * (1 - 1e-9) - 1e-9:
        return True
    return abs(a.step_us - b.step_us) <= 1e-9 * max(1.0, b.step_us) and \
        sum(1 for s in a.assign if s) < sum(1 for s in b.assign if s)


def _exhaustive(regions: list[Region], k: int, evaluate: Callable[[tuple[int, ...]], Outcome | None]) -> Outcome:
    best: Outcome | None = None
    for assign in assignments(regions, k):
        out = evaluate(assign)
        if _better(out, best):
            best = out
    assert best is not None
    return best


def _descend(regions: list[Region], k: int, evaluate: Callable[[tuple[int, ...]], Outcome | None],
             start: tuple[int, ...]) -> Outcome:
    """Steepest descent: the best single move (one region to another stream) while one improves."""
    clash = conflicts(regions)
    best = evaluate(start)
    assert best is not None
    while True:
        moved = sum(1 << r for r, s in enumerate(best.assign) if s)
        step: Outcome | None = None
        for r, region in enumerate(regions):
            if region.reason is not None:
                continue
            for s in range(k):
                if s == best.assign[r] or (s and clash[r] & moved & ~(1 << r)):
                    continue
                cand = evaluate(best.assign[:r] + (s,) + best.assign[r + 1:])
                if _better(cand, step):
                    step = cand
        if step is None or not _better(step, best):
            return best
        best = step


def _drop_idle(best: Outcome, evaluate: Callable[[tuple[int, ...]], Outcome | None]) -> Outcome:
    """Back on the main stream, one at a time, every moved region whose scope saves (next to)
    nothing: ``IDLE_GAIN`` of the step at most."""
    for r in range(len(best.assign)):
        if best.assign[r]:
            cand = evaluate(best.assign[:r] + (0,) + best.assign[r + 1:])
            if cand is not None and cand.step_us <= best.step_us * (1 + IDLE_GAIN):
                best = cand
    return best


def _prefer_fewer(best: Outcome, single: Outcome) -> Outcome:
    """The single stream when the best plan does not save ``MIN_GAIN`` of it."""
    if best.step_us > single.step_us * (1 - MIN_GAIN):
        return single
    return best

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

Bounds (docs/passes.md "Suggested plans", docs/reliability.md): whatever the model, the search
degrades instead of growing. At most ``REGIONS_MAX`` regions are searched (those with the most to
gain, ``min(work, beside)``; the others stay on the main stream with that reason); beyond
``STEEPEST_MOVES`` moves per step the descent sweeps the regions, taking each improving move as it
finds it, instead of replaying every move for the best one; at most ``EVALUATIONS_MAX`` replays and
``TIME_BUDGET_S`` seconds, after which the best plan found so far is kept and
:attr:`SearchResult.stopped` says why (the gap to the lower bound is then the measure of what may
be left). Only predicted steps are kept per assignment; plans are rebuilt for the winner, so
memory does not grow with the replays.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from airctl.predict.candidate import Syncs, Times, build, collectives_split, fence, step_us
from airctl.predict.plan import ReplayPlan
from airctl.predict.regions import Dag, Region, coarsen, conflicts
from airctl.predict.replay import ReplayDeadlock
from airctl.predict.selectors import Choice

EXHAUSTIVE_MAX = 2048  # canonical assignments replayed one by one; more: the heuristic
MIN_GAIN = 0.005  # a plan must save 0.5 % of the single-stream step to be worth a file
IDLE_GAIN = 0.001  # a moved region whose scope saves less than 0.1 % of the step goes back
REGIONS_MAX = 64  # regions searched at most: those with the most to gain
STEEPEST_MOVES = 64  # moves per descent step evaluated all before one is taken; more: sweeps
EVALUATIONS_MAX = 4000  # replays at most
TIME_BUDGET_S = 60.0  # seconds of search at most
PROGRESS_S = 1.0  # how often progress is reported
MEMO_MAX = 20000  # selector choices remembered at most (the memo is cleared beyond)


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
    method: str  # "exhaustive" or "heuristic", with ", stopped early: …" when a bound ended it
    evaluated: int
    candidates: int | None  # how many canonical assignments exist (None: more than EXHAUSTIVE_MAX)
    stopped: str | None = None  # why the search ended before its end (a time or replay bound)


class _Stop(Exception):
    """A bound of the search was reached."""


class _Evaluator:
    """Predicted steps by assignment (only the number is kept), within the replay and time bounds."""

    def __init__(self, base: ReplayPlan, dag: Dag, regions: list[Region], times: Times, max_evals: int,
                 budget_s: float, progress: Callable[[str], None] | None, bound_us: float) -> None:
        self.base, self.dag, self.regions, self.times = base, dag, regions, times
        self.steps: dict[tuple[int, ...], float | None] = {}
        self.memo: dict[Any, Choice] = {}
        self.max_evals, self.progress, self.bound_us = max_evals, progress, bound_us
        self.start = time.monotonic()
        self.deadline = self.start + budget_s
        self.budget_s = budget_s
        self.said = self.start
        self.best_us: float | None = None
        self.stopped: str | None = None

    def step(self, assign: tuple[int, ...]) -> float | None:
        if assign in self.steps:
            return self.steps[assign]
        if self.steps:  # the first (the single stream) is always replayed
            self._check()
        us: float | None = None
        if not collectives_split(self.base, assign, self.regions):
            if len(self.memo) > MEMO_MAX:
                self.memo.clear()
            plan, _ = build(self.base, self.dag, self.regions, assign, self.memo)
            try:
                us = step_us(plan, self.times)
            except ReplayDeadlock:
                us = None
        self.steps[assign] = us
        if us is not None and (self.best_us is None or us < self.best_us):
            self.best_us = us
        return us

    def outcome(self, assign: tuple[int, ...]) -> Outcome | None:
        us = self.step(assign)
        if us is None:
            return None
        plan, syncs = build(self.base, self.dag, self.regions, assign, self.memo)
        return Outcome(assign, us, plan, syncs)

    def _check(self) -> None:
        now = time.monotonic()
        if len(self.steps) > self.max_evals:
            self.stopped = f"the replay bound ({self.max_evals} replays)"
        elif now >= self.deadline:
            self.stopped = f"the time budget ({self.budget_s:g} s)"
        if self.stopped:
            raise _Stop
        if self.progress is not None and now - self.said >= PROGRESS_S:
            self.said = now
            best = f"best {self.best_us:.1f} µs, " if self.best_us is not None else ""
            self.progress(f"searching: {len(self.steps)} replayed, {best}lower bound {self.bound_us:.1f} µs, "
                          f"{now - self.start:.0f} s of {self.budget_s:g} s")


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


def limit_regions(base: ReplayPlan, dag: Dag, regions: list[Region], durations_us: list[float],
                  most: int = REGIONS_MAX) -> None:
    """At most ``most`` candidate regions: numbered siblings beyond it searched ten at a time
    (:func:`airctl.predict.regions.coarsen`, appended to ``regions``), then those with the most to
    gain (``min(work, beside)``) kept; the others get a reason."""
    def movable() -> list[int]:
        return [i for i, r in enumerate(regions) if r.reason is None]

    if len(movable()) <= most:
        return
    coarse = coarsen(dag, regions, durations_us)
    fence(base, dag, coarse)
    regions.extend(coarse)
    left = movable()
    ranked = sorted(left, key=lambda i: (-min(regions[i].work_us, regions[i].beside_us), i))
    for i in ranked[most:]:
        regions[i].reason = (f"the search takes the {most} regions with the most to gain "
                             f"({len(left)} could move; docs/passes.md \"Suggested plans\")")


def search(base: ReplayPlan, dag: Dag, regions: list[Region], times: Times,  # noqa: PLR0913
           k: int, exhaustive_max: int = EXHAUSTIVE_MAX, force: str | None = None, bound_k: int | None = None,
           *, regions_max: int = REGIONS_MAX, max_evals: int = EVALUATIONS_MAX, budget_s: float = TIME_BUDGET_S,
           progress: Callable[[str], None] | None = None) -> SearchResult:
    """The assignment with the shortest predicted step (``force``: "exhaustive" or "heuristic");
    ``bound_k``: the streams the lower bound counts (default ``k``; ``--from``: the plan's too).
    Beyond ``regions_max`` regions, coarser ones are appended to ``regions`` and the rest get a
    reason (:func:`limit_regions`); ``max_evals`` replays
    and ``budget_s`` seconds bound the search, ``progress`` hears of it about once a second."""
    bound = lower_bound(dag, times.durations_us, bound_k or k)
    limit_regions(base, dag, regions, times.durations_us, regions_max)
    ev = _Evaluator(base, dag, regions, times, max(max_evals, 1), budget_s, progress, bound)
    zero = tuple([0] * len(regions))
    single = ev.step(zero)
    assert single is not None
    total = count_assignments(regions, k, exhaustive_max) if force != "heuristic" else None
    exhaustive = force == "exhaustive" or (force is None and total is not None)
    best = zero
    try:
        best = _exhaustive(regions, k, ev) if exhaustive else _descend(regions, k, ev, zero)
        best = _drop_idle(best, ev)
    except _Stop:
        best = _best_known(ev, zero)
    best = _prefer_fewer(best, ev, single)
    out = ev.outcome(best)
    assert out is not None
    method = "exhaustive" if exhaustive else "heuristic"
    if ev.stopped:
        method += f", stopped early at {ev.stopped}"
        if progress is not None:
            progress(f"stopped at {ev.stopped}: best {out.step_us:.1f} µs, {max(out.step_us - bound, 0.0):.1f} µs "
                     "above the lower bound")
    return SearchResult(out, single, bound, method, len(ev.steps), total, ev.stopped)


def _moved(assign: tuple[int, ...]) -> int:
    return sum(1 for s in assign if s)


def _better(a: tuple[int, ...] | None, b: tuple[int, ...] | None, ev: _Evaluator) -> bool:
    """Whether ``a`` beats ``b``: shorter, or as short with fewer moved regions."""
    sa = ev.step(a) if a is not None else None
    if sa is None:
        return False
    sb = ev.step(b) if b is not None else None
    if b is None or sb is None:
        return True
    if sa < sb * (1 - 1e-9) - 1e-9:
        return True
    return abs(sa - sb) <= 1e-9 * max(1.0, sb) and _moved(a) < _moved(b)  # type: ignore[arg-type]


def _best_known(ev: _Evaluator, zero: tuple[int, ...]) -> tuple[int, ...]:
    """The best assignment replayed so far (after a bound stopped the search)."""
    best = zero
    for assign in ev.steps:
        if _better(assign, best, ev):
            best = assign
    return best


def _exhaustive(regions: list[Region], k: int, ev: _Evaluator) -> tuple[int, ...]:
    best: tuple[int, ...] | None = None
    for assign in assignments(regions, k):
        if _better(assign, best, ev):
            best = assign
    assert best is not None
    return best


def _moves(regions: list[Region], k: int, clash: list[int], at: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    moved = sum(1 << r for r, s in enumerate(at) if s)
    for r, region in enumerate(regions):
        if region.reason is not None:
            continue
        for s in range(k):
            if s == at[r] or (s and clash[r] & moved & ~(1 << r)):
                continue
            yield at[:r] + (s,) + at[r + 1:]


def _descend(regions: list[Region], k: int, ev: _Evaluator, start: tuple[int, ...]) -> tuple[int, ...]:
    """Steepest descent: the best single move (one region to another stream) while one improves;
    with more than ``STEEPEST_MOVES`` moves a step, sweeps instead (:func:`_sweep`)."""
    clash = conflicts(regions)
    if sum(1 for r in regions if r.reason is None) * max(k - 1, 1) > STEEPEST_MOVES:
        return _sweep(regions, k, ev, start, clash)
    best = start
    while True:
        step: tuple[int, ...] | None = None
        for cand in _moves(regions, k, clash, best):
            if _better(cand, step, ev):
                step = cand
        if step is None or not _better(step, best, ev):
            return best
        best = step


def _sweep(regions: list[Region], k: int, ev: _Evaluator, start: tuple[int, ...], clash: list[int]) -> tuple[int, ...]:
    """Sweeps over the regions, most to gain first, each improving move taken at once, until a
    whole sweep improves nothing: about as many replays per sweep as moves, not per move taken."""
    order = sorted((r for r, g in enumerate(regions) if g.reason is None),
                   key=lambda r: (-min(regions[r].work_us, regions[r].beside_us), r))
    best, improved = start, True
    while improved:
        improved = False
        for r in order:
            moved = sum(1 << q for q, s in enumerate(best) if s) & ~(1 << r)
            for s in range(k):
                if s == best[r] or (s and clash[r] & moved):
                    continue
                cand = best[:r] + (s,) + best[r + 1:]
                if _better(cand, best, ev):
                    best, improved = cand, True
    return best


def _drop_idle(best: tuple[int, ...], ev: _Evaluator) -> tuple[int, ...]:
    """Back on the main stream, one at a time, every moved region whose scope saves (next to)
    nothing: ``IDLE_GAIN`` of the step at most."""
    for r in range(len(best)):
        if best[r]:
            cand = best[:r] + (0,) + best[r + 1:]
            us, now = ev.step(cand), ev.step(best)
            if us is not None and now is not None and us <= now * (1 + IDLE_GAIN):
                best = cand
    return best


def _prefer_fewer(best: tuple[int, ...], ev: _Evaluator, single_us: float) -> tuple[int, ...]:
    """The single stream when the best plan does not save ``MIN_GAIN`` of it."""
    us = ev.step(best)
    if us is None or us > single_us * (1 - MIN_GAIN):
        return tuple([0] * len(best))
    return best

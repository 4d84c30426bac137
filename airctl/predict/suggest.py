"""The stream plan with the shortest predicted step: candidates replayed, the best kept.

A *candidate* gives each region (:mod:`airctl.predict.regions`) a stream: 0 is the main (default)
stream, 1..K-1 side streams. It is turned into the plan the written pass file will produce, and
that plan is replayed (:mod:`airctl.predict.replay`) — the search compares predicted steps, not
proxies. The plan is built the way the file's passes will act (:func:`build`):

- every node inside a moved region's span runs on its stream (a scope moves its whole span);
- **inputs**: a side group whose span reads from another stream waits, before its first node, for
  a record after the *last* of those producers on the main stream (a ``record`` pass), and for the
  scope record of any other side region it reads (``record: true``); a wait takes the latest record
  of its pass before the site, as the pass engine does, and so does the model;
- **outputs**: the first node on the main stream after a side group that reads its results waits
  for the group's scope record; later readers are ordered by program order.

Every cross-stream data edge is therefore ordered by a record/wait pair (race-free in
reduce-overhead and npugraph_ex, which add no synchronisation; max-autotune also syncs data edges,
which the model adds). Collectives on two streams would need an order between them: such
candidates are refused.

Search (:func:`search`): exhaustive over the canonical assignments (side streams numbered in order
of first use, conflicting regions never both moved) when there are at most ``EXHAUSTIVE_MAX`` of
them; beyond, steepest descent from the single stream (move one region to another stream, keep the
best move, repeat), reported with its gap to :func:`lower_bound`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from airctl.execute.timeline import DEFAULT_STREAM
from airctl.graph.model import is_stream_op
from airctl.graph.roles import collective_kind
from airctl.modes import MAX_AUTOTUNE
from airctl.predict.plan import KERNEL, ReplayPlan
from airctl.predict.regions import Dag, Region, conflicts
from airctl.predict.replay import ReplayDeadlock, replay
from airctl.predict.selectors import Choice, choose

EXHAUSTIVE_MAX = 2048  # canonical assignments replayed one by one; more: the heuristic
MIN_GAIN = 0.005  # a plan must save 0.5 % of the single-stream step to be worth a file
IDLE_GAIN = 0.001  # a moved region whose scope saves less than 0.1 % of the step goes back


def stream_names(base: ReplayPlan, k: int) -> list[str]:
    """The main stream and k - 1 side stream names (``stream_1``, …), none the plan already uses."""
    taken = {t.stream for t in base.tasks}
    names, n = [DEFAULT_STREAM], 0
    while len(names) < max(k, 1):
        n += 1
        if f"stream_{n}" not in taken:
            names.append(f"stream_{n}")
    return names


def fence(base: ReplayPlan, dag: Dag, regions: list[Region]) -> None:
    """With a plan already in the graph (``--from``): a region may not hold its stream ops or nodes
    it put on other streams, nor exchange data with those nodes (it stays on the main stream)."""
    other = [t.stream != DEFAULT_STREAM or is_stream_op(t.op) for t in base.tasks]
    for r in regions:
        if r.reason is not None:
            continue
        for a, b in r.spans:
            inside = range(a, b + 1)
            if any(other[i] for i in inside):
                r.reason = "its span holds nodes the existing plan placed or its stream ops"
            elif any(other[j] for i in inside for j in (*dag.preds[i], *dag.succs[i]) if j not in dag.inputs):
                r.reason = "it exchanges data with the existing plan's side streams"
            if r.reason:
                break


@dataclass
class WaitPass:
    region: int  # the region it serves
    why: str  # "inputs" (at the start of the region's groups) or "outputs" (before the first main reader)
    on: tuple[tuple[str, int], ...]  # ("inputs", region) or ("scope", region): which record passes
    choice: Choice  # its selector and the sites it gives


@dataclass
class Syncs:
    records: dict[int, Choice] = field(default_factory=dict)  # region -> its inputs-ready record pass
    waits: list[WaitPass] = field(default_factory=list)


@dataclass
class Times:
    durations_us: list[float]
    cores: list[float | None] | None = None
    total_cores: float | None = None
    gap_us: float = 0.0
    latency_us: float = 0.0


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


def _latest(records: list[int], site: int) -> int | None:
    """The record of a pass that a wait before ``site`` takes: the latest one before it."""
    before = [r for r in records if r < site]
    return max(before) if before else None


def build(base: ReplayPlan, dag: Dag, regions: list[Region], assign: tuple[int, ...],
          memo: dict[Any, Choice] | None = None) -> tuple[ReplayPlan, Syncs]:
    """The plan and the record/wait passes that the pass file of ``assign`` produces."""
    n = len(base.tasks)
    names = stream_names(base, max(assign, default=0) + 1)
    stream = [0 if t.stream == DEFAULT_STREAM else -1 for t in base.tasks]  # -1: kept where the base has it
    owner = [-1] * n  # region whose span holds the position
    for r, s in enumerate(assign):
        if s:
            for a, b in regions[r].spans:
                for i in range(a, b + 1):
                    stream[i], owner[i] = s, r
    memo = {} if memo is None else memo

    def pick(sites: list[int], end: str, windows: list[tuple[int, int]]) -> Choice:
        order = sorted(range(len(sites)), key=lambda k: sites[k])
        sites, windows = [sites[k] for k in order], [windows[k] for k in order]
        key = (end, tuple(sites), tuple(windows),
               tuple(stream[i] == 0 for lo, hi in windows for i in range(lo, hi + 1)))
        if key not in memo:
            memo[key] = choose(dag.infos, sites, end, windows, lambda p: stream[p] == 0)
        return memo[key]

    syncs = Syncs()
    for r, s in enumerate(assign):
        if not s:
            continue
        rec_sites, rec_windows, out_sites, out_windows = [], [], [], []
        inputs: dict[tuple[tuple[str, int], ...], list[int]] = {}
        for a, b in regions[r].spans:
            main: list[int] = []
            sides: set[int] = set()
            for c in range(a, b + 1):
                for p in dag.preds[c]:
                    if p in dag.inputs or a <= p <= b or stream[p] == s:
                        continue
                    if stream[p] == 0:
                        main.append(p)
                    else:
                        sides.add(owner[p])
            on = [("scope", q) for q in sorted(sides)]
            if main:
                rec_sites.append(max(main))
                rec_windows.append((max(main), a - 1))
                on.insert(0, ("inputs", r))
            if on:
                inputs.setdefault(tuple(on), []).append(a)
            readers = [c for i in range(a, b + 1) for c in dag.succs[i]
                       if c > b and stream[c] == 0 and c not in dag.outputs]
            if readers:
                out_sites.append(min(readers))
                out_windows.append((b + 1, min(readers)))
        if rec_sites:
            syncs.records[r] = pick(rec_sites, "last", rec_windows)
        for on, starts in inputs.items():
            syncs.waits.append(WaitPass(r, "inputs", on, pick(starts, "first", [(a, a) for a in starts])))
        if out_sites:
            syncs.waits.append(WaitPass(r, "outputs", (("scope", r),), pick(out_sites, "first", out_windows)))
    scope_records = {r: [b for _, b in regions[r].spans] for r, s in enumerate(assign) if s}
    tasks = [replace(t, stream=names[stream[t.index]] if stream[t.index] >= 0 else t.stream, after=list(t.after))
             for t in base.tasks]
    for w in syncs.waits:
        for site in w.choice.positions:
            for kind, q in w.on:
                rec = _latest(list(syncs.records[q].positions) if kind == "inputs" else scope_records[q], site)
                if rec is not None:
                    tasks[site].after.append((rec, "record_wait"))
    if base.mode == MAX_AUTOTUNE:  # GE synchronises every cross-stream data edge as well
        for i in range(n):
            tasks[i].after.extend((p, "data") for p in dag.preds[i] if p not in dag.inputs)
    for t in tasks:
        t.after = list(dict.fromkeys((j, k) for j, k in t.after if tasks[j].stream != t.stream))
    return replace(base, tasks=tasks, notes=[]), syncs


def collectives_split(base: ReplayPlan, assign: tuple[int, ...], regions: list[Region]) -> bool:
    """Whether the assignment spreads the graph's collectives over more streams than the base does."""
    comm = [t.index for t in base.tasks if collective_kind(t.op)]
    if len(comm) < 2:
        return False
    streams = {next((f"+{s}" for r, s in enumerate(assign) if s and regions[r].mask >> i & 1),
                    base.tasks[i].stream) for i in comm}
    return len(streams) > len({base.tasks[i].stream for i in comm})


def step_us(plan: ReplayPlan, times: Times) -> float:
    return replay(plan, times.durations_us, times.cores, times.total_cores, times.gap_us, times.latency_us).span_us


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


def kernel_us(plan: ReplayPlan, durations_us: list[float]) -> float:
    return sum(d for t, d in zip(plan.tasks, durations_us, strict=True) if t.kind == KERNEL)

"""The plan a candidate stream assignment produces, as the written pass file will make it.

A *candidate* gives each region (:mod:`airctl.predict.regions`) a stream: 0 is the main (default)
stream, 1..K-1 side streams. :func:`build` turns it into the plan that its pass file produces, for
the replay (:mod:`airctl.predict.replay`) to predict, and into the record and wait passes the file
needs (:class:`Syncs`, written by :mod:`airctl.predict.suggest_yaml`):

- every node inside a moved region's span runs on its stream (a scope moves its whole span);
- **inputs**: a side group whose span reads from another stream waits, before its first node, for
  a record after the *last* of those producers on the main stream (a ``record`` pass), and for the
  scope record of any other side region it reads (``record: true``); a wait takes the latest record
  of its pass before the site, as the pass engine does, and so does the plan built here;
- **outputs**: the first node on the main stream after a side group that reads its results waits
  for the group's scope record; later readers are ordered by program order;
- where a selector cannot name a record or wait site exactly, :mod:`airctl.predict.selectors` may
  pick another position between producer and reader on the main stream: the plan uses the position
  the selector really gives.

Every cross-stream data edge is therefore ordered by a record/wait pair (race-free in
reduce-overhead and npugraph_ex, which add no synchronisation; max-autotune also syncs data edges,
which the plan adds). With a plan already in the graph (``--from``), :func:`fence` keeps regions
away from it and its nodes keep their streams and orderings.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from airctl.execute.timeline import DEFAULT_STREAM
from airctl.graph.model import is_stream_op
from airctl.graph.roles import collective_kind
from airctl.predict.plan import ReplayPlan, keep_cross_stream
from airctl.predict.regions import Dag, Region
from airctl.predict.replay import Replayed, replay
from airctl.predict.selectors import Choice, choose


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
    """What a candidate is priced with: each task's time, its cores, the device's and the host's delays."""

    durations_us: list[float]
    cores: list[float | None] | None = None
    total_cores: float | None = None
    gap_us: float = 0.0
    latency_us: float = 0.0

    def replay(self, plan: ReplayPlan) -> Replayed:
        """``plan`` replayed with these times (:func:`airctl.predict.replay.replay`)."""
        return replay(plan, self.durations_us, self.cores, self.total_cores, self.gap_us, self.latency_us)


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
        merged: dict[int, tuple[int, int]] = {}  # groups sharing a site share one record or wait
        for site, (lo, hi) in zip(sites, windows, strict=True):
            old = merged.get(site, (lo, hi))
            merged[site] = (max(lo, old[0]), min(hi, old[1]))
        sites = sorted(merged)
        windows = [merged[p] for p in sites]
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
    if base.compiled is not None and base.compiled.meaning.syncs_data_edges:  # GE orders cross-stream data edges
        for i in range(n):
            tasks[i].after.extend((p, "data") for p in dag.preds[i] if p not in dag.inputs)
    keep_cross_stream(tasks)
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
    return times.replay(plan).span_us

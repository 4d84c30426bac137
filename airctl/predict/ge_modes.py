"""GE's automatic multi-stream modes as competitors of a suggested plan (max-autotune).

In max-autotune GE can assign streams by itself (``--option ge_config.multistream_parallel_mode=…``,
:mod:`airctl.graph.ge_streams` models its allocation). ``passes suggest`` prices GE's
``LoadBalance:N`` and ``WeightedLoadBalance:N`` (N = 2, 4, 8) on the graph it plans, with the same
times and :class:`~airctl.predict.step.Conditions` as its own plan, and recommends the option when
GE's best is faster. The plan priced is the graph's FX plan with each op on the stream GE gives it
and every cross-stream data edge an ordering (GE's events), as :func:`airctl.predict.plan.plan_from_graph`
builds a max-autotune plan.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from airctl.execute.timeline import DEFAULT_STREAM
from airctl.graph.ge_streams import StreamSpecError, allocate_streams
from airctl.graph.model import Graph, Node
from airctl.predict.plan import ReplayPlan, order_cross_stream_reads
from airctl.predict.step import Conditions, price

SPECS = tuple(f"{mode}:{n}" for mode in ("LoadBalance", "WeightedLoadBalance") for n in (2, 4, 8))


@dataclass
class GeMode:
    spec: str  # "LoadBalance:2"
    step_us: float
    streams: int  # streams GE's allocation used

    @property
    def option(self) -> str:
        return f"ge_config.multistream_parallel_mode={self.spec}"

    def to_json(self) -> dict[str, object]:
        return {"spec": self.spec, "step_us": self.step_us, "streams": self.streams, "option": self.option}


def restream(plan: ReplayPlan, graph: Graph, stream_of: dict[str, int]) -> ReplayPlan:
    """``plan`` with each op on GE's stream (0: the default stream) and every cross-stream data edge of
    ``graph`` an ordering, as GE's events make it."""
    index = {t.name: t.index for t in plan.tasks}
    nodes = {n.name: n for n in graph.nodes}
    tasks = []
    for t in plan.tasks:
        s = stream_of.get(t.name)
        if s is None:  # no task of its own (a view, an input): where what it reads is
            node = nodes.get(t.name)
            first = next((index[p] for r in (node.inputs if node else []) if (p := Node.producer(r)) in index
                          and index[p] < t.index), None)
            stream = tasks[first].stream if first is not None else DEFAULT_STREAM
        else:
            stream = DEFAULT_STREAM if s == 0 else f"ge_{s}"
        tasks.append(replace(t, stream=stream, after=[]))
    order_cross_stream_reads(tasks, graph)
    return replace(plan, tasks=tasks, notes=[])


def price_ge_modes(plan: ReplayPlan, graph: Graph, durations_us: list[float], cores: list[float | None],
                   cond: Conditions, specs: tuple[str, ...] = SPECS) -> list[GeMode]:
    """Each of GE's ``specs`` on ``graph`` (the planned FX graph, user streams kept as labels), priced."""
    times = {t.name: d for t, d in zip(plan.tasks, durations_us, strict=True) if d > 0}
    out = []
    for spec in specs:
        try:
            alloc = allocate_streams(graph, spec, times if spec.startswith("Weighted") else None)
        except (StreamSpecError, ValueError):
            continue
        moved = restream(plan, graph, dict(alloc.stream))
        out.append(GeMode(spec, price(moved, durations_us, cores, cond).step_us, len(set(alloc.stream.values()))))
    return out

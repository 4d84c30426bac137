"""GE's automatic multi-stream modes priced as competitors of a plan (issue: GE's automatic multi-stream)."""

from __future__ import annotations

import pytest

from airctl.graph.model import Graph, Node
from airctl.predict.ge_modes import price_ge_modes
from airctl.predict.plan import plan_from_graph
from airctl.predict.step import Conditions


def branches(lengths: tuple[int, ...]) -> Graph:
    """Independent chains of matmuls from one input, summed at the end: one branch per length."""
    nodes = [Node("x", "placeholder", kind="placeholder")]
    tails = []
    for b, n in enumerate(lengths):
        prev = "x"
        for k in range(n):
            name = f"mm_{b}_{k}"
            args = {"args": [f"%{prev}", "%x"]}
            nodes.append(Node(name, "aten.mm.default", [prev], kind="call_function", attrs=args))
            prev = name
        tails.append(prev)
    acc = tails[0]
    for k, t in enumerate(tails[1:]):
        nodes.append(Node(f"add_{k}", "aten.add.Tensor", [acc, t], kind="call_function",
                          attrs={"args": [f"%{acc}", f"%{t}"]}))
        acc = f"add_{k}"
    nodes.append(Node("output", "output", [acc], kind="output"))
    return Graph("g", "fx", nodes)


def test_loadbalance_2_runs_two_equal_branches_side_by_side() -> None:
    graph = branches((3, 3))
    plan = plan_from_graph(graph, "max-autotune")
    durations = [10.0 if t.op == "aten.mm.default" else 1.0 if t.kind == "kernel" else 0.0 for t in plan.tasks]
    modes = {m.spec: m for m in price_ge_modes(plan, graph, durations, [None] * len(durations),
                                               Conditions(launch_us=0.0))}
    # one stream: 6 × 10 + 1; LoadBalance:2: the two chains side by side, 3 × 10 + 1
    assert modes["LoadBalance:2"].step_us == pytest.approx(31.0)
    assert modes["LoadBalance:2"].streams == 2
    assert modes["LoadBalance:2"].option == "ge_config.multistream_parallel_mode=LoadBalance:2"


def test_weighted_loadbalance_uses_the_times_for_unequal_branches() -> None:
    # branches of 4, 1, 1, 1, 1 matmuls on 2 streams: LoadBalance balances chain counts, the weighted mode
    # puts the long branch alone: 4 × 10 beside 4 × 10, then the adds
    graph = branches((4, 1, 1, 1, 1))
    plan = plan_from_graph(graph, "max-autotune")
    durations = [10.0 if t.op == "aten.mm.default" else 1.0 if t.kind == "kernel" else 0.0 for t in plan.tasks]
    modes = {m.spec: m for m in price_ge_modes(plan, graph, durations, [None] * len(durations),
                                               Conditions(launch_us=0.0))}
    assert modes["WeightedLoadBalance:2"].step_us <= modes["LoadBalance:2"].step_us
    assert modes["WeightedLoadBalance:2"].step_us == pytest.approx(44.0)

"""``passes suggest``'s search stays bounded on wide models (issue 63.2), no compile.

A wide graph of N independent branches (a ``Linear`` per branch in a numbered ``ModuleList``, the
ReLU called in ``forward``, results summed) has one region per branch: the unbounded descent
replayed every move of every step (N² replays, each plan kept: 5.6 GB at N = 200). The whole
command's memory is measured by bench/bench_suggest_wide.py and the slow
tests/pipeline/test_suggest_wide_memory.py in fresh processes; here the counts that bound it, and
the search's own Python allocations at N = 200 (about 1 MB at its peak).
"""

from __future__ import annotations

import tracemalloc

import pytest

from airctl.predict import suggest as sg
from tests.predict.test_suggest import _node, _summed, problem

SEARCH_PEAK = 32 << 20  # bytes the search may allocate at once on the wide graphs (120 and 200 branches)


@pytest.fixture(scope="module")
def air():  # noqa: ANN201
    from airctl.sim.session import load_torchair

    load_torchair()
    import torch

    return torch


def wide(torch, n: int):  # noqa: ANN001, ANN201
    import torch.fx as fx

    g = fx.Graph()
    x, w = g.placeholder("x"), g.placeholder("w")
    times, outs = {}, []
    for i in range(n):
        mm = _node(g, torch, torch.ops.aten.mm.default, (x, w), f"mm_{i}", f"branches.{i}", 30)
        relu = _node(g, torch, torch.ops.aten.relu.default, (mm,), f"relu_{i}", None, 31)
        times[mm.name], times[relu.name] = 4.0, 1.0
        outs.append(relu)
    return _summed(g, fx, torch, outs, times, us=1.0, line=32), times


# 120 branches take 83 replays; 200 (the wide model of issue 63, 215 replays) is a sweep (--sweeps): under
# tracemalloc each replay costs ten times its time
@pytest.mark.parametrize("n", [120, pytest.param(200, marks=pytest.mark.sweep)])
def test_a_wide_model_is_searched_in_coarser_regions_within_the_bounds(air, n: int) -> None:
    gm, times = wide(air, n)
    _, base, dag, regions, tm = problem(gm, times, "reduce-overhead")
    assert sum(r.reason is None for r in regions) > sg.REGIONS_MAX
    tracemalloc.start()
    try:
        found = sg.search(base, dag, regions, tm, 2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < SEARCH_PEAK  # only predicted steps are kept (every replayed plan kept: 5.6 GB at N = 200)
    searched = [r for r in regions if r.reason is None]
    assert len(searched) <= sg.REGIONS_MAX
    assert any(r.key == "module branches.1?" for r in searched)
    assert all("searched as part of module branches." in (r.reason or "") for r in regions
               if r.key.startswith("module branches.") and "?" not in r.key)
    assert found.evaluated <= sg.EVALUATIONS_MAX + 1 and found.stopped is None
    assert found.lower_bound_us <= found.best.step_us < found.single_us * 0.8
    assert len(found.best.assign) == len(regions)


def test_a_search_past_its_budget_keeps_the_best_so_far_and_says_why(air) -> None:
    gm, times = wide(air, 40)
    _, base, dag, regions, tm = problem(gm, times, "reduce-overhead")
    heard: list[str] = []
    found = sg.search(base, dag, regions, tm, 3, force="heuristic", max_evals=5, progress=heard.append)
    assert found.stopped == "the replay bound (5 replays)" and "stopped early" in found.method
    assert found.evaluated <= 6
    assert found.lower_bound_us <= found.best.step_us <= found.single_us
    assert heard and "above the lower bound" in heard[-1]


def test_a_zero_time_budget_still_answers_with_the_single_stream(air) -> None:
    gm, times = wide(air, 12)
    _, base, dag, regions, tm = problem(gm, times, "reduce-overhead")
    found = sg.search(base, dag, regions, tm, 2, budget_s=0.0)
    assert found.stopped == "the time budget (0 s)"
    assert found.best.step_us == found.single_us and not any(found.best.assign)


def test_only_numbered_siblings_beyond_ten_are_coarsened(air) -> None:
    from airctl.predict.regions import coarsen

    gm, times = wide(air, 8)
    _, base, dag, regions, tm = problem(gm, times, "reduce-overhead")
    assert coarsen(dag, regions, tm.durations_us) == []

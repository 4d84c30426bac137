"""``airctl passes suggest``'s search and writer on generated graphs, no compile (issue 43).

Each generated graph is a ``torch.fx`` graph with the metadata AOT gives (``nn_module_stack``,
``stack_trace``), read the way the ledger reads graphs. The search is checked against a brute force
over every assignment; the written file is parsed, applied with the built-in passes to the very
graph, read back and replayed: its step must be the step the search predicted, and the verifier
must find no race in it.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from airctl.passes import builtin
from airctl.passes.spec import parse_text
from airctl.predict.candidate import Times, build, step_us, stream_names
from airctl.predict.plan import plan_from_graph
from airctl.predict.regions import dag_of, find_regions
from airctl.predict.replay import ReplayDeadlock
from airctl.predict.suggest import search
from airctl.predict.suggest_yaml import render
from airctl.predict.times import Row, TimesTable

MODES = ["reduce-overhead", "max-autotune"]


@pytest.fixture(scope="module")
def air():  # noqa: ANN201
    """torch with TorchAir's air ops registered (what the built-in passes insert)."""
    from airctl.sim.session import load_torchair

    load_torchair()
    import torch

    return torch


def _node(g, torch, op, args, name, module, line):  # noqa: ANN001, ANN202
    node = g.create_node("call_function", op, args, name=name)
    node.meta["stack_trace"] = (f'  File "/src/model.py", line 90, in forward\n'
                                f'  File "/src/model.py", line {line}, in f\n')
    if module:
        node.meta["nn_module_stack"] = {module: (f"L['self'].{module}", object)}
    return node


def _summed(g, fx, torch, values, times, *, us: float, line: int):  # noqa: ANN001, ANN202
    """``values`` added up in order (``add_K`` nodes of ``us`` each, at ``line``) as the graph's output."""
    acc = values[0]
    for k, v in enumerate(values[1:]):
        acc = _node(g, torch, torch.ops.aten.add.Tensor, (acc, v), f"add_{k}", None, line)
        times[acc.name] = us
    g.output(acc)
    return fx.GraphModule(torch.nn.Module(), g)


def generated(torch, seed: int):  # noqa: ANN201
    """A random DAG of module chains joined at the root, and a time per kernel (µs)."""
    import torch.fx as fx

    rng = random.Random(seed)
    g = fx.Graph()
    x, w = g.placeholder("x"), g.placeholder("w")
    values, used, times = [x], set(), {}
    for i in range(rng.randint(2, 5)):
        prev = rng.choice(values)
        used.add(prev)
        for j in range(rng.randint(1, 3)):
            module = f"m{i}.inner" if j == 1 and rng.random() < 0.5 else f"m{i}"
            if rng.random() < 0.7:
                prev = _node(g, torch, torch.ops.aten.mm.default, (prev, w), f"mm_{i}_{j}", module, 10 + i)
            else:
                prev = _node(g, torch, torch.ops.aten.relu.default, (prev,), f"relu_{i}_{j}", module, 10 + i)
            times[prev.name] = rng.choice([1.0, 5.0, 10.0, 20.0, 40.0]) * rng.uniform(0.8, 1.2)
        values.append(prev)
    sinks = [v for v in values[1:] if v not in used]
    return _summed(g, fx, torch, sinks, times, us=2.0, line=50), times


def equal_chains(torch, depth: int = 4, us: float = 10.0, join: bool = False):  # noqa: ANN201
    """Two independent chains of equal cost (modules left and right); joined by an add when ``join``."""
    import torch.fx as fx

    g = fx.Graph()
    a, b, w = g.placeholder("a"), g.placeholder("b"), g.placeholder("w")
    times = {}
    ends = []
    for side, h in (("left", a), ("right", b)):
        for j in range(depth):
            h = _node(g, torch, torch.ops.aten.mm.default, (h, w), f"{side}_{j}", side, 20)
            times[h.name] = us
        ends.append(h)
    if join:
        out = _node(g, torch, torch.ops.aten.add.Tensor, tuple(ends), "add", None, 30)
        times["add"] = 1.0
        g.output(out)
    else:
        g.output(tuple(ends))
    return fx.GraphModule(torch.nn.Module(), g), times


def table(times: dict[str, float]) -> TimesTable:
    return TimesTable("test", "node", {n: Row(us, None, 0) for n, us in times.items()})


def problem(gm, times: dict[str, float], mode: str):  # noqa: ANN001, ANN201
    from airctl.io.fx_reader import read_fx

    graph = read_fx(gm, "g")
    base = plan_from_graph(graph, mode)
    tm = Times(table(times).resolve(base).durations_us)
    dag = dag_of(graph, base)
    return graph, base, dag, find_regions(dag, tm.durations_us), tm


def brute_force(base, dag, regions, tm: Times, k: int) -> float:  # noqa: ANN001
    """The best step over every assignment of every region that can be a scope (no pruning, no symmetry)."""
    movable = [i for i, r in enumerate(regions) if r.spans and "overlap" not in (r.reason or "")]
    best = float("inf")
    for choice in itertools.product(range(k), repeat=len(movable)):
        assign = [0] * len(regions)
        for i, s in zip(movable, choice, strict=True):
            assign[i] = s
        moved = [regions[i] for i, s in enumerate(assign) if s]
        if any(a.mask & b.mask for a, b in itertools.combinations(moved, 2)):
            continue
        plan, _ = build(base, dag, regions, tuple(assign))
        try:
            best = min(best, step_us(plan, tm))
        except ReplayDeadlock:
            continue
    return best


def apply_file(torch, gm, text: str, tmp_path: Path):  # noqa: ANN001, ANN201
    """The written file's passes, applied in file order to ``gm`` as the pre-stage hook does."""
    from airctl.io.fx_reader import read_fx

    spec = parse_text(text, tmp_path / "suggested.yaml")
    for p in spec.passes:
        builtin.build(p)(gm, [], None)
    return read_fx(gm, "g")


def replayed(graph, times: dict[str, float], mode: str) -> float:  # noqa: ANN001
    plan = plan_from_graph(graph, mode)
    return step_us(plan, Times(table(times).resolve(plan).durations_us))


SEEDS = range(30)  # 24 of them have something to overlap


def test_most_generated_graphs_have_something_to_overlap(air) -> None:
    movable = [s for s in SEEDS if any(r.reason is None for r in problem(*generated(air, s), "reduce-overhead")[3])]
    assert len(movable) >= 20, movable


@pytest.mark.parametrize("seed", SEEDS)
def test_the_suggestion_is_the_optimum_of_a_brute_force_and_never_slower_than_one_stream(air, seed: int) -> None:
    gm, times = generated(air, seed)
    _, base, dag, regions, tm = problem(gm, times, "reduce-overhead")
    for k in (2, 3) if len(regions) <= 7 else (2,):  # the brute force replays k ** regions plans
        found = search(base, dag, regions, tm, k)
        assert found.method == "exhaustive"
        optimum = brute_force(base, dag, regions, tm, k)
        assert found.best.step_us <= optimum * 1.02 + 1e-9
        assert found.best.step_us <= found.single_us + 1e-9
        assert found.lower_bound_us <= optimum + 1e-9


@pytest.mark.parametrize("seed", SEEDS)
def test_the_heuristic_stays_within_2_percent_of_the_optimum_on_small_graphs(air, seed: int) -> None:
    gm, times = generated(air, seed)
    _, base, dag, regions, tm = problem(gm, times, "reduce-overhead")
    exact = search(base, dag, regions, tm, 2, force="exhaustive")
    greedy = search(base, dag, regions, tm, 2, force="heuristic")
    assert greedy.best.step_us <= exact.best.step_us * 1.02 + 1e-9
    assert greedy.best.step_us <= greedy.single_us + 1e-9


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(0, 24, 3))
def test_the_written_file_applied_to_the_graph_replays_to_the_predicted_step_without_a_race(
        air, tmp_path: Path, seed: int, mode: str, k: int) -> None:
    from airctl.verify.verifier import verify

    gm, times = generated(air, seed)
    _, base, dag, regions, tm = problem(gm, times, mode)
    found = search(base, dag, regions, tm, k)
    if not any(found.best.assign):
        pytest.skip("nothing to overlap in this graph")
    text = render(regions, found.best.assign, found.best.syncs, {}, ["test"], stream_names(base, k))
    applied = apply_file(air, gm, text, tmp_path)
    assert replayed(applied, times, mode) == pytest.approx(found.best.step_us, rel=1e-6)
    errors = [f for f in verify(applied, mode) if f.severity == "error"]
    assert errors == [], [f.message for f in errors]


def test_two_equal_chains_on_two_streams_take_one_chain(air, tmp_path: Path) -> None:
    gm, times = equal_chains(air, depth=4, us=10.0)
    _, base, dag, regions, tm = problem(gm, times, "reduce-overhead")
    found = search(base, dag, regions, tm, 2)
    assert found.single_us == pytest.approx(80.0)
    assert found.best.step_us <= 40.0 * 1.02
    assert found.best.step_us == pytest.approx(found.lower_bound_us)
    text = render(regions, found.best.assign, found.best.syncs, {}, ["test"], stream_names(base, 2))
    assert "kind: stream_scope" in text and 'select: {module: "' in text
    applied = apply_file(air, gm, text, tmp_path)
    assert replayed(applied, times, "reduce-overhead") == pytest.approx(40.0)
    from airctl.verify.verifier import verify

    # the side chain's result is a graph output: the closure event before the output orders it
    assert [f.message for f in verify(applied, "reduce-overhead") if f.severity == "error"] == []


def test_joined_equal_chains_wait_for_the_side_chain_before_the_join(air, tmp_path: Path) -> None:
    from airctl.verify.verifier import verify

    gm, times = equal_chains(air, depth=3, us=10.0, join=True)
    _, base, dag, regions, tm = problem(gm, times, "reduce-overhead")
    found = search(base, dag, regions, tm, 2)
    assert found.best.step_us == pytest.approx(31.0)  # one chain, then the add
    text = render(regions, found.best.assign, found.best.syncs, {}, ["test"], stream_names(base, 2))
    assert "kind: wait" in text and 'before: {target: "aten.add.Tensor"}' in text
    applied = apply_file(air, gm, text, tmp_path)
    assert [f.rule for f in verify(applied, "reduce-overhead") if f.severity == "error"] == []
    # without the wait pass the same scope is a race: the wait is what makes it safe
    racy = "\n".join(text.split("  # the main stream waits")[0].splitlines()) + "\n"
    gm2, _ = equal_chains(air, depth=3, us=10.0, join=True)
    assert any(f.rule.startswith("race") for f in verify(apply_file(air, gm2, racy, tmp_path), "reduce-overhead"))


def test_a_single_chain_has_nothing_to_overlap(air) -> None:
    import torch.fx as fx

    g = fx.Graph()
    h, w = g.placeholder("x"), g.placeholder("w")
    times = {}
    for j, module in enumerate(["a", "a", "b", "c"]):
        h = _node(g, air, air.ops.aten.mm.default, (h, w), f"mm{j}", module, 5)
        times[h.name] = 10.0
    g.output(h)
    _, base, dag, regions, tm = problem(fx.GraphModule(air.nn.Module(), g), times, "reduce-overhead")
    found = search(base, dag, regions, tm, 4)
    assert not any(found.best.assign) and found.best.step_us == pytest.approx(40.0)
    assert all(r.reason and "nothing can run beside it" in r.reason for r in regions if r.spans)


def test_beyond_the_exhaustive_size_the_heuristic_reports_its_gap_to_the_lower_bound(air) -> None:
    gm, times = generated(air, 5)
    _, base, dag, regions, tm = problem(gm, times, "reduce-overhead")
    found = search(base, dag, regions, tm, 3, exhaustive_max=1)
    assert found.method == "heuristic" and found.candidates is None
    assert found.lower_bound_us <= found.best.step_us <= found.single_us


def test_merge_appends_to_the_users_list_at_its_indentation_and_keeps_its_comments() -> None:
    from airctl.predict.suggest_yaml import merge

    user = "# mine\nversion: 1\npasses:\n- name: a   # first\n  kind: record\n  after: {target: aten.mm}\n"
    added = "  - name: b\n    kind: stream_scope\n    stream: s\n    select: {module: \"m\"}\n"
    text = merge(user, added, ["added"])
    assert text is not None and text.startswith(user.rstrip("\n")) and "# first" in text
    assert [p.name for p in parse_text(text).passes] == ["a", "b"]
    assert merge("passes:\n  - name: a\n    kind: record\n    after: {target: x}\nversion: 1\n", added, []) is None


def test_fence_keeps_regions_away_from_an_existing_plan(air) -> None:
    from airctl.predict.candidate import fence

    gm, times = equal_chains(air, depth=2, join=True)
    graph, base, dag, regions, tm = problem(gm, times, "reduce-overhead")
    by_key = {r.key: r for r in regions}
    assert by_key["module left"].reason is None and by_key["module right"].reason is None
    base.tasks[graph.nodes.index(graph.node("right_0"))].stream = "theirs"  # as if a user's pass had moved it
    base.tasks[graph.nodes.index(graph.node("add"))].stream = "theirs"
    fence(base, dag, regions)
    assert "placed" in (by_key["module right"].reason or "")
    assert "exchanges data" in (by_key["module left"].reason or "")  # its result feeds the moved add

"""GE's automatic multi-stream allocation (airctl/graph/ge_streams.py, path_cover.py): the cover is
minimum, the streams respect the mode and N, labelled ops keep their stream, and the events order
every cross-stream dependency with none that an earlier one already implies."""

from __future__ import annotations

import itertools
import random

import pytest

from airctl.graph.ge_streams import StreamSpecError, allocate_streams, parse_spec
from airctl.graph.model import Graph, Node
from airctl.graph.path_cover import path_cover


def _graph(edges: dict[str, list[str]], ops: dict[str, str] | None = None, labels: dict[str, str] | None = None,
           outputs: list[str] | None = None) -> Graph:
    """Data ``x`` feeds every op without inputs; ``edges`` maps an op to its inputs, in graph order."""
    nodes = [Node("x", "Data")]
    for name, inputs in edges.items():
        attrs = {"_user_stream_label": labels[name]} if labels and name in labels else {}
        nodes.append(Node(name, (ops or {}).get(name, "Abs"), [f"{i}:0" for i in inputs] or ["x:0"], attrs=attrs))
    nodes.append(Node("out", "NetOutput", [f"{o}:0" for o in outputs or [list(edges)[-1]]]))
    return Graph("g", "ge", nodes)


def _two_chains(depth: int = 3) -> Graph:
    edges: dict[str, list[str]] = {}
    for side in "lr":
        for k in range(depth):
            edges[f"{side}{k}"] = [f"{side}{k - 1}"] if k else []
    edges["add"] = [f"l{depth - 1}", f"r{depth - 1}"]
    return _graph(edges)


def test_the_spec_forms_and_bad_values() -> None:
    assert parse_spec("LoadBalance:2") == ("LoadBalance", 2)
    assert parse_spec(" WeightedLoadBalance:64 ") == ("WeightedLoadBalance", 64)
    assert parse_spec("cv") == ("cv", 2)
    for bad in ("LoadBalance", "LoadBalance:0", "MainStream:65", "cv:2", "Balance:2", "loadbalance:2", ""):
        with pytest.raises(StreamSpecError, match="autoMultistreamParallelMode"):
            parse_spec(bad)


def test_two_independent_chains_get_two_streams_and_one_event_each_way_needed() -> None:
    alloc = allocate_streams(_two_chains(), "LoadBalance:2")
    assert alloc.streams == [0, 1]
    assert {alloc.stream[f"l{k}"] for k in range(3)} != {alloc.stream[f"r{k}"] for k in range(3)}
    assert len({alloc.stream[f"l{k}"] for k in range(3)}) == 1  # a chain stays on one stream
    assert [(e.src, e.dst) for e in alloc.events] == [("r2", "add")] or [(e.src, e.dst) for e in alloc.events] == [
        ("l2", "add")]
    assert alloc.names == {0: None, 1: "1"}
    assert allocate_streams(_two_chains(), "LoadBalance:1").streams == [0]
    assert allocate_streams(_two_chains(), "LoadBalance:1").events == []


def test_n_bounds_the_streams_and_load_is_balanced() -> None:
    fan = _graph({f"b{k}": [] for k in range(8)} | {"join": [f"b{k}" for k in range(8)]})
    alloc = allocate_streams(fan, "LoadBalance:4")
    assert alloc.streams == [0, 1, 2, 3]
    per_stream = [sum(1 for s in alloc.stream.values() if s == sid) for sid in alloc.streams]
    assert max(per_stream) - min(per_stream) <= 1
    assert len(allocate_streams(fan, "LoadBalance:16").streams) == 8  # never more streams than chains


def test_main_stream_keeps_serial_ops_on_stream_0() -> None:
    # pre -> {a0 -> a1, b0} -> post: pre and post are ordered against every op
    g = _graph({"pre": [], "a0": ["pre"], "a1": ["a0"], "b0": ["pre"], "post": ["a1", "b0"]})
    alloc = allocate_streams(g, "MainStream:2")
    assert alloc.stream["pre"] == alloc.stream["post"] == 0
    assert alloc.stream["a0"] == alloc.stream["a1"] == 0  # the longest chain
    assert alloc.stream["b0"] == 1


def test_cv_puts_cube_ops_beside_vector_ops() -> None:
    g = _graph({"mm": [], "abs": [], "add": ["mm", "abs"]}, ops={"mm": "MatMulV2", "abs": "Abs", "add": "Add"})
    alloc = allocate_streams(g, "cv")
    assert (alloc.stream["mm"], alloc.stream["abs"], alloc.stream["add"]) == (1, 0, 0)
    assert [(e.src, e.dst) for e in alloc.events] == [("mm", "add")]


def test_weighted_load_balance_list_schedules_op_times() -> None:
    # three independent branches, times 10, 10 and 20: with two streams the long one runs alone
    g = _graph({"a": [], "b": [], "c": [], "join": ["a", "b", "c"]})
    alloc = allocate_streams(g, "WeightedLoadBalance:2", {"a": 10.0, "b": 10.0, "c": 20.0, "join": 1.0})
    assert alloc.weighted
    assert alloc.stream["a"] == alloc.stream["b"] != alloc.stream["c"]
    plain = allocate_streams(g, "LoadBalance:2")
    assert plain.stream["a"] != plain.stream["b"]  # by op count: a and b are split
    unmatched = allocate_streams(g, "WeightedLoadBalance:2", {"other": 5.0})
    assert not unmatched.weighted and unmatched.stream == plain.stream  # no time matched: LoadBalance
    # GE matches an op's name without its scope (after the last /) too
    scoped = Graph("g", "ge", [Node("x", "Data"), Node("s/a", "Abs", ["x:0"])])
    assert allocate_streams(scoped, "WeightedLoadBalance:2", {"a": 3.0}).weighted


def test_labelled_ops_keep_their_stream() -> None:
    g = _graph({"a": [], "b": [], "c": ["a", "b"]}, labels={"b": "side"})
    alloc = allocate_streams(g, "LoadBalance:2")
    sid = alloc.stream["b"]
    assert alloc.names[sid] == "side" and sid not in (alloc.stream["a"], alloc.stream["c"])
    assert ("b", "c") in [(e.src, e.dst) for e in alloc.events]


def test_no_task_ops_get_no_stream_and_outputs_join_stream_0() -> None:
    g = _graph({"a": [], "b": []}, outputs=["a", "b"])
    alloc = allocate_streams(g, "LoadBalance:2")
    assert "x" not in alloc.stream and "out" not in alloc.stream
    other = "a" if alloc.stream["a"] == 1 else "b"
    assert [(e.src, e.dst) for e in alloc.events] == [(other, "out")]


def _is_dag_cover(n: int, succ: list[list[int]], chains: list[list[int]]) -> bool:
    seen = sorted(i for c in chains for i in c)
    return seen == list(range(n)) and all(b in succ[a] for c in chains for a, b in itertools.pairwise(c))


def _brute_min_cover(n: int, succ: list[list[int]]) -> int:
    edges = [(u, v) for u in range(n) for v in succ[u]]
    best = 0
    for k in range(len(edges), 0, -1):
        for pick in itertools.combinations(edges, k):
            if len({u for u, _ in pick}) == k and len({v for _, v in pick}) == k:
                return n - k
    return n - best


def _random_dag(rng: random.Random, n: int, p: float) -> list[list[int]]:
    return [[v for v in range(u + 1, n) if rng.random() < p] for u in range(n)]


def test_the_path_cover_is_minimum_on_random_dags() -> None:
    rng = random.Random(58)
    for _ in range(60):
        n = rng.randint(1, 8)
        succ = _random_dag(rng, n, rng.choice([0.2, 0.4, 0.7]))
        chains = path_cover(n, succ)
        assert _is_dag_cover(n, succ, chains)
        assert len(chains) == _brute_min_cover(n, succ)


def test_a_large_graph_is_covered_quickly() -> None:
    rng = random.Random(1)
    n = 5000
    succ = [sorted({min(n - 1, u + rng.randint(1, 40)) for _ in range(3)} - {u}) for u in range(n)]
    chains = path_cover(n, succ)
    assert _is_dag_cover(n, succ, chains)


def _happens_before(g: Graph, alloc) -> set[tuple[str, str]]:
    """(a, b): a is done before b starts, by stream order and the events only."""
    order: dict[int, list[str]] = {}
    for node in g.nodes:
        sid = alloc.stream.get(node.name, 0 if node.op == "NetOutput" else None)
        if sid is not None:
            order.setdefault(sid, []).append(node.name)
    succ: dict[str, set[str]] = {n.name: set() for n in g.nodes}
    for ops in order.values():
        for a, b in itertools.pairwise(ops):
            succ[a].add(b)
    for e in alloc.events:
        succ[e.src].add(e.dst)
    closure = set()
    for start in succ:
        stack, seen = [start], set()
        while stack:
            for nxt in succ[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        closure |= {(start, s) for s in seen}
    return closure


@pytest.mark.parametrize("spec", ["LoadBalance:2", "LoadBalance:3", "MainStream:3", "WeightedLoadBalance:2", "cv"])
def test_events_order_every_cross_stream_dependency_and_none_is_redundant(spec: str) -> None:
    rng = random.Random(spec)
    for _ in range(25):
        n = rng.randint(2, 12)
        succ = _random_dag(rng, n, 0.3)
        edges = {f"n{v}": [f"n{u}" for u in range(n) if v in succ[u]] for v in range(n)}
        ops = {f"n{k}": rng.choice(["Abs", "MatMul"]) for k in range(n)}
        g = _graph(edges, ops=ops, outputs=[f"n{k}" for k in range(n) if not succ[k]])
        times = {f"n{k}": float(rng.randint(1, 9)) for k in range(n)}
        alloc = allocate_streams(g, spec, times)
        hb = _happens_before(g, alloc)
        for node in g.nodes:
            for ref in node.inputs:
                src = Node.producer(ref)
                if src in alloc.stream and (src, node.name) not in hb:
                    pytest.fail(f"{spec}: {src} -> {node.name} is not ordered by {alloc.events}")
        for e in alloc.events:  # without it, its dependency would be unordered
            rest = alloc.events.copy()
            rest.remove(e)
            alloc_without = type(alloc)(alloc.spec, alloc.stream, alloc.names, rest)
            assert (e.src, e.dst) not in _happens_before(g, alloc_without)


def test_an_fx_graph_too_with_its_scopes_as_labels() -> None:
    fx = Graph("fx", "fx", [
        Node("a", "placeholder", kind="placeholder"),
        Node("enter", "air.scope_enter.default", kind="call_function"),
        Node("abs", "aten.abs.default", ["a"], kind="call_function", stream="s1"),
        Node("exit", "air.scope_exit.default", kind="call_function", stream="s1"),
        Node("mm", "aten.mm.default", ["a", "a"], kind="call_function"),
        Node("exp", "aten.exp.default", ["a"], kind="call_function"),
        Node("add", "aten.add.Tensor", ["mm", "abs", "exp"], kind="call_function"),
        Node("output", "output", ["add"], kind="output")])
    alloc = allocate_streams(fx, "LoadBalance:2")
    assert set(alloc.stream) == {"abs", "mm", "exp", "add"}  # no input, output or scope marker
    assert alloc.names[alloc.stream["abs"]] == "s1" and alloc.stream["mm"] != alloc.stream["exp"]
    assert {(e.src, e.dst) for e in alloc.events} == {("abs", "add"), ("exp" if alloc.stream["exp"] else "mm", "add")}


def test_a_graph_listed_out_of_order_is_ordered_first_and_a_cycle_is_refused() -> None:
    from airctl.graph.ge_streams import GraphOrderError

    g = Graph("g", "ge", [Node("x", "Data"), Node("b", "Exp", ["a:0"]), Node("a", "Abs", ["x:0"]),
                          Node("c", "Neg", ["x:0"]), Node("d", "Add", ["b:0", "c:0"]),
                          Node("out", "NetOutput", ["d:0"])])
    alloc = allocate_streams(g, "LoadBalance:2")
    assert alloc.stream["a"] == alloc.stream["b"]  # a -> b is one chain although b is listed first
    assert {(e.src, e.dst) for e in alloc.events} == {("c", "d")} or {(e.src, e.dst) for e in alloc.events} == {
        ("b", "d")}
    loop = Graph("g", "ge", [Node("a", "Abs", ["b:0"]), Node("b", "Exp", ["a:0"])])
    with pytest.raises(GraphOrderError, match="cycle through a, b"):
        allocate_streams(loop, "LoadBalance:2")

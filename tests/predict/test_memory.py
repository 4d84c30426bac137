"""The memory model on hand-computed plans (docs/memory.md "The model"), in every mode where a rule differs.

Sizes: float32 ``[n]`` tensors whose bytes are a multiple of 512, so each block is bytes + 512
(``round_up(bytes + 32, 512)``): [256] -> 1536, [512] -> 2560, [1024] -> 4608, [2048] -> 8704.
Durations are given per kernel; markers and views take none (the replay's rule).
"""

from __future__ import annotations

import pytest

from airctl.graph.model import Graph, Node
from airctl.predict.memory import downsample, memory_delta, predict_memory
from airctl.predict.memory_sizes import block_bytes, input_kind, tensor_bytes
from airctl.predict.plan import ReplayPlan, plan_from_graph
from airctl.predict.replay import replay

ACLGRAPH = ("reduce-overhead", "npugraph_ex")
ALL = (*ACLGRAPH, "max-autotune")


def f32(n: int) -> dict:
    return {"tensors": [{"shape": [n], "dtype": "torch.float32"}]}


def op(name: str, target: str, args: list, n: int | None = None, src: str | None = None) -> Node:
    refs = [a[1:] for a in args if isinstance(a, str) and a.startswith("%")]
    return Node(name, target, refs, kind="call_function", attrs={"args": args}, meta=f32(n) if n else {},
                source=src)


def enter(stream: str) -> Node:
    return Node(f"enter_{stream}", "air.scope_enter.default", kind="call_function",
                attrs={"args": [["_user_stream_label"], [stream]]})


def leave(stream: str) -> Node:
    return Node(f"exit_{stream}", "air.scope_exit.default", kind="call_function", attrs={"args": []})


def record(name: str) -> Node:
    return Node(name, "air.record.default", kind="call_function", attrs={"args": []})


def wait(name: str, rec: str) -> Node:
    return Node(name, "air.wait.default", [rec], kind="call_function", attrs={"args": [[f"%{rec}"]]})


def x_input(n: int = 256) -> Node:
    return Node("x", "placeholder", kind="placeholder", meta=f32(n))


def output(*names: str) -> Node:
    return Node("output", "output", list(names), kind="output", attrs={"args": [[f"%{n}" for n in names]]})


def predicted(graph: Graph, mode: str, times: dict[str, float]):  # noqa: ANN201
    plan = plan_from_graph(graph, mode)
    done = replay(plan, [times.get(t.name, 0.0) for t in plan.tasks])
    return plan, done, predict_memory(plan, done)


def two_chains(streams: bool) -> Graph:
    """a1 -> a2 on the default stream, b1 -> b2 on stream_1 (or default), joined by ``out``."""
    nodes = [x_input(), op("a1", "aten.abs.default", ["%x"], 1024), op("a2", "aten.neg.default", ["%a1"], 1024)]
    side = [op("b1", "aten.relu.default", ["%x"], 2048), op("b2", "aten.neg.default", ["%b1"], 2048)]
    if streams:
        nodes += [enter("stream_1"), *side, record("rec"), leave("stream_1"), wait("w", "rec")]
    else:
        nodes += side
    nodes += [op("out", "aten.add.Tensor", ["%a2", "%b2"], 1024, src="m.py:9"), output("out")]
    return Graph("g", "fx", nodes)


CHAIN_TIMES = {"a1": 10.0, "a2": 10.0, "b1": 20.0, "b2": 20.0, "out": 5.0}


@pytest.mark.parametrize("mode", ALL)
def test_two_chains_side_stream_lives_longer_and_keeps_its_own_blocks(mode: str) -> None:
    # default: a1 [0,10) a2 [10,20), the wait until 40, out [40,45); stream_1: b1 [0,20) b2 [20,40).
    # a1 [0,20) a2 [10,45) b1 [0,40) b2 [20,45: read on default, never ordered back) out [40,45)
    plan, done, m = predicted(two_chains(True), mode, CHAIN_TIMES)
    assert done.span_us == 45.0
    assert m.allocated_peak_bytes == 4608 + 8704 + 8704 == 22016  # t=20: a1 freed, a2 b1 b2
    assert m.by_stream == {"default": 4608 * 2, "stream_1": 8704 * 2}
    assert m.planned_bytes == 9216 + 17408 == 26624  # blocks are reused only on their own stream
    assert m.inputs_bytes == 1536 and m.params_bytes == 0 and m.outputs_bytes == 4608
    assert m.peak_bytes == 1536 + 26624
    assert m.peak_at == {"node": "b2", "source": None, "stream": "stream_1", "time_us": 20.0, "bytes": 22016}
    assert [(d["tensor"], d["stream"], d["reader"]) for d in m.unbounded] == [("b2", "default", "out")]
    assert m.unbounded[0]["race"] is False  # stream_1 allocates nothing after out
    assert m.rule == ("GE static plan" if mode == "max-autotune" else "aclgraph capture pool")
    single = predicted(two_chains(False), mode, CHAIN_TIMES)[2]
    # one stream: a1 [0,20) a2 [10,65) b1 [20,60) b2 [40,65) out [60,65): peak at b2, a2 b1 b2 + 0
    assert single.peak_bytes == 1536 + 4608 + 8704 + 8704 == 23552
    delta = memory_delta(single, m)
    assert delta["delta_bytes"] == 28160 - 23552 == 4608
    assert [d["tensor"] for d in delta["grew"]] == ["b2"]


def read_on_side(wait_back: bool) -> Graph:
    """y on the default stream, read by z on stream_1; the default stream waits for z's record or not."""
    nodes = [x_input(), op("y", "aten.abs.default", ["%x"], 1024), record("r0"), enter("stream_1"), wait("w0", "r0"),
             op("z", "aten.neg.default", ["%y"], 2048), record("rec"), leave("stream_1"),
             op("u", "aten.relu.default", ["%x"], 512)]
    if wait_back:
        nodes.append(wait("w", "rec"))
    nodes += [op("out", "aten.add.Tensor", ["%u", "%z"], 2048, src="m.py:12"), output("out")]
    return Graph("g", "fx", nodes)


READ_TIMES = {"y": 10.0, "z": 30.0, "u": 5.0, "out": 5.0}


@pytest.mark.parametrize("mode", ALL)
def test_cross_stream_read_released_by_the_wait(mode: str) -> None:
    # default: y [0,10) u [10,15) w until 40 (max-autotune: out waits for z's data) out [40,45);
    # stream_1: w0 at 10, z [10,40). y: no reader on its stream, read on stream_1 -> freed at w (or out) = 40
    plan, done, m = predicted(read_on_side(True), mode, READ_TIMES)
    assert [(d["tensor"], d["stream"], d["until"], d["own_until"]) for d in m.stretched] == [
        ("y", "stream_1", "w", "y")]
    # t=10: y u z = 4608 + 2560 + 8704; t=40: y freed, out allocated: u z out
    assert m.allocated_peak_bytes == 2560 + 8704 + 8704 == 19968
    assert m.by_stream == {"default": 2560 + 8704, "stream_1": 8704}
    assert m.peak_bytes == 1536 + 11264 + 8704 == 21504
    assert m.peak_at is not None and (m.peak_at["node"], m.peak_at["source"]) == ("out", "m.py:12")
    assert [d["tensor"] for d in m.unbounded] == ["z"]  # z is never ordered back to stream_1


def test_without_the_wait_the_read_is_unbounded_and_a_race_under_aclgraph() -> None:
    for mode in ACLGRAPH:
        # default: y [0,10) u [10,15) out [15,20) (no wait: out reads z early, itself a race);
        # stream_1: z [10,40). y lives to the end (40): the default stream allocates u and out after z's read
        _, done, m = predicted(read_on_side(False), mode, READ_TIMES)
        assert done.span_us == 40.0
        assert [(d["tensor"], d["stream"], d["reader"], d["race"]) for d in m.unbounded if d["tensor"] == "y"] == [
            ("y", "stream_1", "z", True)]
        # t=15: y u z out
        assert m.allocated_peak_bytes == 4608 + 2560 + 8704 + 8704 == 24576
        assert m.by_stream == {"default": 4608 + 2560 + 8704, "stream_1": 8704}
        assert m.peak_bytes == 1536 + 15872 + 8704 == 26112
        assert any("race" in n for n in m.notes)


def test_without_the_wait_ge_orders_the_read_back_by_its_data_edge() -> None:
    # max-autotune: GE puts an event on out's read of z, which orders the default stream after z:
    # y is freed when out starts (40); same numbers as with the wait
    _, done, m = predicted(read_on_side(False), "max-autotune", READ_TIMES)
    assert done.span_us == 45.0
    assert [(d["tensor"], d["until"]) for d in m.stretched] == [("y", "out")]
    assert m.peak_bytes == 21504 and m.allocated_peak_bytes == 19968
    assert [(d["tensor"], d["race"]) for d in m.unbounded] == [("z", False)]


@pytest.mark.parametrize("mode", ALL)
def test_an_in_place_op_writes_into_its_input(mode: str) -> None:
    # a = abs(x); b = a.add_(1) (no block: it is a); c = add(a, b): a [0,30) c [20,30) -> 9216.
    # Were add_ a new block, b [10,30) would make it 13824.
    g = Graph("g", "fx", [x_input(1024), op("a", "aten.abs.default", ["%x"], 1024),
                          op("b", "aten.add_.Tensor", ["%a", 1], 1024),
                          op("c", "aten.add.Tensor", ["%a", "%b"], 1024), output("c")])
    _, _, m = predicted(g, mode, {"a": 10.0, "b": 10.0, "c": 10.0})
    assert [life.tensor.name for life in m.lives] == ["a", "c"]
    assert (m.lives[0].alloc_us, m.lives[0].free_us) == (0.0, 30.0)
    assert m.allocated_peak_bytes == 9216 and m.peak_bytes == 4608 + 9216
    assert m.outputs_bytes == 4608 and m.intermediates_peak_bytes == 4608


def test_views_and_getitem_allocate_nothing_and_extend_their_base() -> None:
    g = Graph("g", "fx", [
        x_input(1024),
        Node("s", "aten.split.Tensor", ["x"], kind="call_function", attrs={"args": ["%x", 512]}, meta={}),
        Node("mx", "aten.max.dim", ["x"], kind="call_function", attrs={"args": ["%x", 0]},
             meta={"tensors": [{"shape": [1], "dtype": "float32"}, {"shape": [1], "dtype": "int64"}]}),
        Node("i1", "getitem", ["mx"], kind="call_function", attrs={"args": ["%mx", 1]}),
        op("v", "aten.view.default", ["%i1", [1]], 1),
        op("n", "aten.neg.default", ["%v"], 1), output("n")])
    _, _, m = predicted(g, "reduce-overhead", {"mx": 10.0, "n": 10.0})
    # mx's two blocks (512 each); only its second is read (through getitem and view) by n
    lives = {life.tensor.name: (life.free_us, life.tensor.bytes) for life in m.lives}
    assert lives == {"mx": (10.0, 512), "mx[1]": (20.0, 512), "n": (20.0, 512)}


def test_the_capture_pool_is_the_captured_graphs_peak_held_per_stream() -> None:
    # one stream: the pool is the peak of the captured graph, a1 a2 b1 b2 out as in the single-stream case
    _, _, single = predicted(two_chains(False), "npugraph_ex", CHAIN_TIMES)
    assert single.planned_bytes == single.allocated_peak_bytes == 22016
    # two streams: 26624, more than the 22016 ever allocated at once (stream_1's blocks never serve default)
    _, _, two = predicted(two_chains(True), "npugraph_ex", CHAIN_TIMES)
    assert (two.planned_bytes, two.allocated_peak_bytes) == (26624, 22016)


def test_parameters_are_counted_apart() -> None:
    g = Graph("g", "fx", [x_input(), Node("p_fc_weight", "placeholder", kind="placeholder", meta=f32(2048)),
                          op("mm", "aten.mul.Tensor", ["%x", "%p_fc_weight"], 256), output("mm")])
    _, _, m = predicted(g, "max-autotune", {"mm": 3.0})
    assert (m.inputs_bytes, m.params_bytes, m.outputs_bytes) == (1536, 8704, 1536)
    assert m.peak_bytes == 1536 + 8704 + 1536


def test_json_and_series() -> None:
    _, _, m = predicted(two_chains(True), "reduce-overhead", CHAIN_TIMES)
    js = m.to_json()
    assert js["peak_bytes"] == 28160 and js["by_stream"]["stream_1"] == 17408
    assert js["counts"] == {"stretched": 0, "unbounded": 1} and js["unbounded"][0]["tensor"] == "b2"
    assert js["live_bytes"]["stream_1"][:3] == [[0.0, 8704], [20.0, 17408], [40.0, 8704]]
    pts = [(float(i), i % 7) for i in range(10_000)]
    small = downsample(pts, 2000)
    assert len(small) <= 2000 and max(b for _, b in small) == 6 and small[-1] == pts[-1]


def test_sizes_rule() -> None:
    assert [block_bytes(n) for n in (1, 479, 480, 481, 512, 1 << 20)] == [512, 512, 512, 1024, 1024, (1 << 20) + 512]
    assert block_bytes(512, pad=0) == 512  # Ascend950 with new CANN: no pad
    assert tensor_bytes({"shape": [2, 3], "dtype": "bfloat16"}) == 12
    assert tensor_bytes({"shape": [4], "dtype": 1}) == 16  # GE proto DT_FLOAT
    assert tensor_bytes({"shape": ["s0", 3], "dtype": "float32"}) is None
    assert input_kind(Node("w", "placeholder", kind="placeholder", meta={"input_kind": "parameter"})) == "param"
    assert input_kind(Node("b_running_mean", "placeholder", kind="placeholder")) == "param"


def test_ge_graph_static_plan() -> None:
    out = [{"shape": [1024], "dtype": 1}]  # GE proto DT_FLOAT: 4096 bytes -> 4608
    g = Graph("g", "ge", [
        Node("arg", "Data", meta={"outputs": out}),
        Node("w", "Const", meta={"outputs": out}),
        Node("MatMul", "MatMul", ["arg:0", "w:0"], stream="s1", meta={"outputs": out}),
        Node("Abs", "Abs", ["arg:0"], meta={"outputs": out}),
        Node("Add", "Add", ["MatMul:0", "Abs:0"], meta={"outputs": out}),
        Node("Neg", "Neg", ["Add:0"], meta={"outputs": out}),
        Node("out", "NetOutput", ["Neg:0"]),
    ])
    plan = plan_from_graph(g, "max-autotune")
    done = replay(plan, [10.0 if t.kind == "kernel" else 0.0 for t in plan.tasks])
    m = predict_memory(plan, done)
    # s1: MatMul [0,10) read by Add on default: no s1 task after it -> held to the end (20+10=30)
    # default: Abs [0,10) Add [10,20) Neg [20,30): Abs freed at 20, Add at 30 -> 2 blocks at once
    assert (m.inputs_bytes, m.params_bytes, m.outputs_bytes) == (4608, 4608, 4608)
    assert m.by_stream == {"default": 9216, "s1": 4608}
    assert m.peak_bytes == 4608 * 2 + 9216 + 4608
    assert [(d["tensor"], d["race"]) for d in m.unbounded] == [("MatMul", False)]


def test_a_plan_without_a_graph_predicts_nothing() -> None:
    plan = ReplayPlan("g", "max-autotune", "profile", [])
    m = predict_memory(plan, replay(plan, []))
    assert m.peak_bytes == 0 and m.notes


def test_kernels_without_time_keep_program_order() -> None:
    # a table that covers no kernel replays them all at t=0: a, b, c still hold two blocks at most
    g = Graph("g", "fx", [x_input(1024), op("a", "aten.abs.default", ["%x"], 1024),
                          op("b", "aten.neg.default", ["%a"], 1024), op("c", "aten.relu.default", ["%b"], 1024),
                          output("c")])
    _, done, m = predicted(g, "reduce-overhead", {})
    assert done.span_us == 0.0 and m.allocated_peak_bytes == 9216 and m.peak_at["node"] == "b"  # type: ignore[index]

"""The multi-stream executor on hand-built FX graphs: races, mode semantics, deadlocks, timeouts."""

from __future__ import annotations

import time

import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module", autouse=True)
def air_ops() -> None:
    from airctl.sim.session import load_torchair

    load_torchair()  # TorchAir registers the air ops


def op(g, target, args, name: str | None = None):
    """An FX call_function node with a chosen name (TorchAir's traced graphs name them mm, abs_1, ...)."""
    return g.create_node("call_function", target, tuple(args), {}, name=name)


def _src(node, line: int) -> None:
    node.meta["stack_trace"] = f'  File "model.py", line {line}, in forward\n    ...'


def seed_gm(wait_before: str | None = None, inplace_add: bool = False):
    """TorchAir's docs example: mm, abs on stream_1 (record after abs); add, sub on the default stream."""
    air, aten = torch.ops.air, torch.ops.aten
    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.call_function(air.scope_enter.default, (["_user_stream_label"], ["stream_1"]))
    mm = op(g, aten.mm.default, (x, x), "mm")
    _src(mm, 8)
    ab = op(g, aten.abs.default, (mm,), "abs_1")
    _src(ab, 9)
    rec = op(g, air.record.default, (), "record_default")
    g.call_function(air.scope_exit.default, ())
    if wait_before == "add":
        op(g, air.wait.default, ([rec],), "wait_default")
    add = op(g, aten.add_.Tensor if inplace_add else aten.add.Tensor, (ab, 1), "add_" if inplace_add else "add")
    _src(add, 10)
    if wait_before == "sub":
        op(g, air.wait.default, ([rec],), "wait_default")
    sub = op(g, aten.sub.Tensor, (x, mm), "sub")
    _src(sub, 11)
    g.output((add, sub))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def eager(x):
    mm = x @ x
    return mm.abs() + 1, x - mm


def run(gm, mode: str, x, **kw):
    from airctl.execute.executor import StreamExecutor
    from airctl.execute.recorder import Recorder

    rec = Recorder(keep_events=True)
    ex = StreamExecutor(gm, mode, "g", recorder=rec, **kw)
    try:
        out = ex.run([x])
    finally:
        ex.close()
    return out, rec


def same(out, ref) -> bool:
    return all(torch.allclose(a, b) for a, b in zip(out, ref, strict=True))


X = torch.randn(64, 64)


def test_racy_plan_is_reported_in_reduce_overhead_with_both_nodes_and_lines() -> None:
    out, rec = run(seed_gm(), "reduce-overhead", X)
    assert same(out, eager(X))
    pairs = {(r.reader, r.producer): r for _, r in rec.races}
    assert set(pairs) == {("add", "abs_1"), ("sub", "mm")}
    race = pairs[("add", "abs_1")]
    assert (race.reader_stream, race.producer_stream) == ("default", "stream_1")
    assert (race.reader_source, race.producer_source) == ("model.py:10", "model.py:9")
    assert "add (model.py:10)" in race.message and "abs_1 (model.py:9)" in race.message


@pytest.mark.parametrize("mode, named", [("reduce-overhead", "reduce-overhead adds"),
                                         ("npugraph_ex", "npugraph_ex (aclgraph) adds")])
def test_a_race_names_the_mode_that_ran(mode: str, named: str) -> None:
    """npugraph_ex runs reduce-overhead's semantics, and its races say npugraph_ex, as its findings do."""
    _, rec = run(seed_gm(), mode, X)
    assert rec.races and all(named in r.message for _, r in rec.races), [r.message for _, r in rec.races]


def test_docs_plan_waits_too_late_for_add() -> None:
    out, rec = run(seed_gm(wait_before="sub"), "reduce-overhead", X)
    assert same(out, eager(X))
    assert [(r.reader, r.producer) for _, r in rec.races] == [("add", "abs_1")]


def test_correct_plan_reports_nothing_and_records_the_sync() -> None:
    out, rec = run(seed_gm(wait_before="add"), "reduce-overhead", X)
    assert same(out, eager(X))
    assert rec.races == []
    (tl,) = rec.timelines.values()
    assert [(s.kind, s.src, s.dst, s.src_stream, s.dst_stream) for s in tl.syncs] == [
        ("record_wait", "record_default", "wait_default", "stream_1", "default")]
    streams = {e.node: e.stream for e in tl.events}
    assert streams["mm"] == streams["abs_1"] == "stream_1" and streams["add"] == streams["sub"] == "default"
    assert all(e.end_s >= e.start_s >= 0 for e in tl.events)


def test_max_autotune_synchronises_data_edges_as_ge_does() -> None:
    out, rec = run(seed_gm(), "max-autotune", X)
    assert same(out, eager(X))
    assert rec.races == []
    (tl,) = rec.timelines.values()
    # GE's sync of abs_1 -> add also orders mm (earlier on stream_1) before sub: one sync shown
    assert [(s.kind, s.src, s.dst) for s in tl.syncs] == [("data", "abs_1", "add")]


def test_inplace_write_after_cross_stream_produce_races_in_reduce_overhead_and_is_ordered_by_ge() -> None:
    # add_ overwrites abs_1 (made on stream_1) on the default stream with no wait: a race in aclgraph;
    # in max-autotune GE synchronises the abs_1 -> add_ data edge itself
    for mode in ("reduce-overhead", "max-autotune"):
        x = X.clone()
        out, rec = run(seed_gm(inplace_add=True), mode, x)
        assert same(out, eager(X))
        if mode == "reduce-overhead":
            assert ("add_", "abs_1") in {(r.reader, r.producer) for _, r in rec.races}
        else:
            assert rec.races == []
    out, rec = run(seed_gm(wait_before="add", inplace_add=True), "reduce-overhead", X.clone())
    assert rec.races == []


def test_serial_mode_finds_the_same_races() -> None:
    out, rec = run(seed_gm(), "reduce-overhead", X, serial=True)
    assert same(out, eager(X))
    assert {(r.reader, r.producer) for _, r in rec.races} == {("add", "abs_1"), ("sub", "mm")}


def test_no_recorder_still_runs_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    from airctl.execute.executor import StreamExecutor

    ex = StreamExecutor(seed_gm(), "reduce-overhead", "g")
    assert same(ex.run([X]), eager(X))
    ex.run([X])
    assert sum("stream race" in r.message for r in caplog.records) == 2  # once per race, not per call


def deadlock_gm():
    """default: wait_a([record_1]) then record_0; stream_1: wait_b([record_0]) ... record_1."""
    air, aten = torch.ops.air, torch.ops.aten
    g = torch.fx.Graph()
    x = g.placeholder("x")
    enter = g.call_function(air.scope_enter.default, (["_user_stream_label"], ["stream_1"]))
    mm = op(g, aten.mm.default, (x, x), "mm")
    _src(mm, 8)
    rec1 = op(g, air.record.default, (), "record_default_1")
    g.call_function(air.scope_exit.default, ())
    out = op(g, aten.sub.Tensor, (x, mm), "sub")
    g.output((out,))
    with g.inserting_before(enter):
        wait_a = op(g, air.wait.default, ([rec1],), "wait_default")
        rec0 = op(g, air.record.default, (), "record_default")
    with g.inserting_after(enter):
        op(g, air.wait.default, ([rec0],), "wait_default_1")
    _src(wait_a, 7)
    return torch.fx.GraphModule(torch.nn.Module(), g)


def test_deadlocking_plan_is_refused_by_the_verifier_before_running() -> None:
    from airctl.execute.executor import StreamDeadlock, StreamExecutor

    with pytest.raises(StreamDeadlock) as info:
        StreamExecutor(deadlock_gm(), "reduce-overhead", "g")
    msg = str(info.value)
    assert "deadlock_cycle" in msg and "wait_default" in msg and "record_default" in msg
    assert info.value.node == "wait_default" and info.value.hint


@pytest.mark.parametrize("serial", [False, True])
def test_deadlock_at_run_time_stops_at_once_naming_waits_and_records(serial: bool) -> None:
    from airctl.execute.executor import StreamDeadlock, StreamExecutor

    ex = StreamExecutor(deadlock_gm(), "reduce-overhead", "g", check_deadlock=False, timeout_s=30, serial=serial)
    t0 = time.perf_counter()
    with pytest.raises(StreamDeadlock) as info:
        ex.run([X])
    assert time.perf_counter() - t0 < 5  # found when every stream blocked, not by the 30 s timeout
    msg = str(info.value)
    assert "deadlock" in msg
    assert "wait_default (model.py:7) on the default stream waits for record record_default_1" in msg
    assert "wait_default_1 on stream 'stream_1' waits for record record_default" in msg


def slow_side_gm(seconds: float):
    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.call_function(torch.ops.air.scope_enter.default, (["_user_stream_label"], ["side"]))
    slow = op(g, _sleepy, (x, seconds), "_sleepy")
    rec = op(g, torch.ops.air.record.default, (), "record_default")
    g.call_function(torch.ops.air.scope_exit.default, ())
    op(g, torch.ops.air.wait.default, ([rec],), "wait_default")
    g.output((g.call_function(torch.ops.aten.neg.default, (slow,)),))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def _sleepy(x, seconds):
    time.sleep(seconds)
    return x + 1


def _boom(x):
    raise ValueError("boom on the side stream")


def test_timeout_names_the_blocked_wait_and_the_running_node() -> None:
    from airctl.execute.executor import StreamDeadlock, StreamExecutor

    ex = StreamExecutor(slow_side_gm(3.0), "reduce-overhead", "g", timeout_s=0.3)
    t0 = time.perf_counter()
    with pytest.raises(StreamDeadlock) as info:
        ex.run([X])
    assert time.perf_counter() - t0 < 2.5
    msg = str(info.value)
    assert "waited more than 0.3 s" in msg
    assert "wait_default on the default stream waits for record record_default" in msg
    assert "stream 'side' is running _sleepy" in msg


def test_an_error_on_a_side_stream_ends_the_run() -> None:
    from airctl.execute.executor import StreamExecutor

    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.call_function(torch.ops.air.scope_enter.default, (["_user_stream_label"], ["side"]))
    bad = g.call_function(_boom, (x,))
    g.call_function(torch.ops.air.scope_exit.default, ())
    g.output((g.call_function(torch.ops.aten.neg.default, (bad,)),))
    ex = StreamExecutor(torch.fx.GraphModule(torch.nn.Module(), g), "max-autotune", "g", timeout_s=5)
    with pytest.raises(ValueError, match="boom on the side stream"):
        ex.run([X])


def test_wait_tensor_is_identity_in_max_autotune() -> None:
    import importlib

    from airctl.execute.executors import Executors

    importlib.import_module("torchair.scope._wait_tensor")  # registers air.wait_tensor (lazily, as TorchAir does)
    g = torch.fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(torch.ops.aten.neg.default, (x,))
    z = g.call_function(torch.ops.air.wait_tensor.default, (x, y))
    g.output((z, y))
    out = Executors().run_ge(torch.fx.GraphModule(torch.nn.Module(), g), [X], "g")
    assert torch.equal(out[0], X) and torch.equal(out[1], -X)


def test_each_executor_reports_only_to_the_recorder_it_was_given() -> None:
    """The recorder is passed explicitly: two executors, two recorders, nothing crosses over."""
    from airctl.execute.executor import StreamExecutor
    from airctl.execute.pool import WorkerPool
    from airctl.execute.recorder import Recorder

    racy, ordered = Recorder(keep_events=True), Recorder()
    with WorkerPool() as pool:
        a = StreamExecutor(seed_gm(), "reduce-overhead", "racy", recorder=racy, pool=pool)
        b = StreamExecutor(seed_gm(wait_before="add"), "reduce-overhead", "ordered", recorder=ordered, pool=pool)
        for _ in range(2):
            a.run([X])
            b.run([X])
    assert set(racy.timelines) == {"racy"} and set(ordered.timelines) == {"ordered"}
    assert {g for g, _ in racy.races} == {"racy"} and ordered.races == []
    assert racy.timelines["racy"].events and not ordered.timelines["ordered"].events  # only racy keeps events
    assert ordered.timelines["ordered"].meta["runs"] == 2


def test_an_executor_without_a_pool_makes_one_and_close_ends_it() -> None:
    from airctl.execute.executor import StreamExecutor

    ex = StreamExecutor(seed_gm(wait_before="add"), "reduce-overhead", "g")
    assert same(ex.run([X]), eager(X))
    pool = ex.pool
    assert pool is not None and pool.started == 1
    assert same(ex.run([X]), eager(X)) and pool.started == 1  # the stream's thread is kept between runs
    ex.close()
    assert pool.closed and ex.pool is None
    assert same(ex.run([X]), eager(X))  # a fresh pool after close
    ex.close()


def test_schedule_and_verifier_plan_classify_nodes_alike() -> None:
    """One classifier: the executor's roles are the verifier's, but for wait_tensor in reduce-overhead."""
    import importlib

    from airctl.execute.schedule import build_schedule
    from airctl.graph.roles import Role
    from airctl.io.fx_reader import read_fx
    from airctl.verify.plan import build_plan

    importlib.import_module("torchair.scope._wait_tensor")
    gm = seed_gm(wait_before="add")
    y = next(n for n in gm.graph.nodes if n.name == "sub")
    with gm.graph.inserting_after(y):
        gm.graph.call_function(torch.ops.air.wait_tensor.default, (y, y))
    gm.recompile()
    for mode in ("max-autotune", "reduce-overhead"):
        plan = build_plan(read_fx(gm, "g"), mode)
        sched = build_schedule(gm, mode, "g")
        expected = [Role.OP if (r is Role.WAIT_TENSOR and mode == "reduce-overhead") else r for r in plan.roles]
        assert [it.role for it in sched.items] == expected
        assert Role.SCOPE_ENTER in expected and Role.RECORD in expected and Role.WAIT in expected

"""Collectives on the multi-stream executor: each is issued in graph order whatever its stream, runs on
its stream's thread, and is written to the rank's collective log (a world of one: gloo, no network)."""

from __future__ import annotations

import pytest

from airctl.execute.executor import StreamExecutor
from airctl.execute.schedule import build_schedule
from airctl.ledger.collectives import CollectiveLog, read_log
from tests.execute.test_executor import op

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module", autouse=True)
def world_of_one():
    import torch.distributed as dist

    from airctl.sim.session import load_torchair

    load_torchair()  # the air ops
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def comm_gm(on_comm: bool = True):
    """mm, then its all-reduce (and wait) on stream `comm`, beside a second mm; a second all-reduce on
    the default stream; the output adds them all."""
    air, aten, c10d = torch.ops.air, torch.ops.aten, torch.ops._c10d_functional
    g = torch.fx.Graph()
    x = g.placeholder("x")
    mm = op(g, aten.mm.default, (x, x), "mm")
    if on_comm:
        g.call_function(air.scope_enter.default, (["_user_stream_label"], ["comm"]))
    ar = op(g, c10d.all_reduce.default, (mm, "sum", "0"), "all_reduce")
    wt = op(g, c10d.wait_tensor.default, (ar,), "wait_tensor")
    if on_comm:
        g.call_function(air.scope_exit.default, ())
    mm1 = op(g, aten.mm.default, (x, mm), "mm_1")
    ar1 = op(g, c10d.all_reduce.default, (mm1, "sum", "0"), "all_reduce_1")
    wt1 = op(g, c10d.wait_tensor.default, (ar1,), "wait_tensor_1")
    g.output((op(g, aten.add.Tensor, (wt, wt1), "add"),))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def test_the_schedule_knows_collectives_and_issues_them_in_graph_order() -> None:
    sched = build_schedule(comm_gm(), "max-autotune", "graph_1")
    items = {it.name: it for it in sched.items}
    assert items["all_reduce"].collective == "all_reduce" and items["mm"].collective is None
    assert items["wait_tensor"].waits_for == items["all_reduce"].index
    assert sched.streams[items["all_reduce"].stream] == "comm"
    # the second all-reduce (default stream) is issued after the first (comm), whatever the threads do
    assert items["all_reduce"].index in items["all_reduce_1"].deps


def test_every_collective_and_wait_is_logged_with_its_stream(tmp_path) -> None:
    log = CollectiveLog(tmp_path / "collectives.jsonl")
    x = torch.randn(4, 4)
    out = StreamExecutor(comm_gm(), "max-autotune", "graph_1", collectives=log).run([x])
    log.close()
    assert torch.allclose(out[0], x @ x + x @ (x @ x))  # a world of one: all-reduce is the identity
    activity = read_log(log.path)
    assert [(c.seq, c.node, c.stream, c.shape, c.dtype, c.group, c.completed, c.waited) for c in activity.issued] == [
        (0, "all_reduce", "comm", [4, 4], "float32", "0", True, True),
        (1, "all_reduce_1", "default", [4, 4], "float32", "0", True, True)]
    assert activity.last()["state"] == "outside compiled graphs"  # the graph ended


def test_without_a_log_nothing_is_written(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a log written to a default place relative to the working folder lands here
    for method in ("issue", "done", "wait", "graph"):  # and none is written anywhere else
        monkeypatch.setattr(CollectiveLog, method,
                            lambda *a, _m=method, **k: pytest.fail(f"logged ({_m}) without a log"))
    x = torch.randn(2, 2)
    out = StreamExecutor(comm_gm(on_comm=False), "max-autotune", "graph_1").run([x])
    assert torch.allclose(out[0], x @ x + x @ (x @ x))
    assert list(tmp_path.iterdir()) == []

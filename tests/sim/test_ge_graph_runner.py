"""GE graphs with no FX graph behind them run under sim (issue 31, acceptance 2): a graph built with
``torchair.ge``'s graph API and loaded into ``TorchNpuGraph``, one ``cache_compile`` saves and
reloads, and ``dynamo_export``'s ``.air`` file (``_torchair.export``)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # TorchAir's import and compiles


def _session(runs=None):
    from airctl.backends.sim import sim_context
    from airctl.pipeline.run.execution import RunExecution
    from airctl.sim.session import session

    return session(sim_context(runs or RunExecution()))


def _graph_api_graph():
    """x @ y + 1.5 split in two, Relu of the first part, the second cast to int32 (TorchAir's own API)."""
    from torchair._ge_concrete_graph import ge_apis as ge
    from torchair.core._backend import TorchNpuGraph
    from torchair.ge._ge_graph import DataType, GeGraph

    with GeGraph() as graph:
        x = ge.Data(index=0, shape=[2, 3], dtype=DataType.DT_FLOAT, placement="CPU")
        y = ge.Data(index=1, shape=[3, 4], dtype=DataType.DT_FLOAT, placement="CPU")
        w = ge.Add(ge.MatMul(x, y, None), ge.Const(1.5))
        a, b = ge.SplitV(w, ge.Const([1, 3]), ge.Const(1), num_split=2)
        ge.NetOutput([ge.Relu(a), ge.Cast(b, dst_type=DataType.DT_INT32)])
        graph.attr["_output_dtypes"].list.i.extend([DataType.DT_FLOAT, DataType.DT_INT32])
        executor = TorchNpuGraph("api_graph")
        executor.load(graph)
        executor.compile()
    return executor


def test_a_graph_built_with_torchair_ge_runs_and_matches_torch_ops() -> None:
    import torch

    from airctl.execute.recorder import Recorder
    from airctl.pipeline.run.execution import RunExecution

    runs = RunExecution()
    x, y = torch.randn(2, 3), torch.randn(3, 4)
    ref = x @ y + 1.5
    with _session(runs):
        executor = _graph_api_graph()
        with runs.recording(Recorder(keep_events=True)) as rec:
            relu, cast = executor.run([x, y])
    torch.testing.assert_close(relu, torch.relu(ref[:, :1]))
    assert cast.dtype == torch.int32 and torch.equal(cast, ref[:, 1:].to(torch.int32))
    ops = {e.op for t in rec.timelines.values() for e in t.events}
    assert {"ge.MatMul", "ge.Add", "ge.SplitV", "ge.Relu", "ge.Cast"} <= ops  # the session's executor ran them
    # outside the session the same loaded graph still runs (its own executor)
    again = executor.run([x, y])
    torch.testing.assert_close(again[0], relu)


def test_assigned_outputs_and_ref_inputs_are_written_in_place() -> None:
    import torch

    with _session():
        from torchair._ge_concrete_graph import ge_apis as ge
        from torchair.core._backend import TorchNpuGraph
        from torchair.ge._ge_graph import DataType, GeGraph

        with GeGraph() as graph:
            x1 = ge.Data(index=0, shape=[3, 4], dtype=DataType.DT_FLOAT, placement="NPU")
            x2 = ge.Data(index=1, shape=[3, 4], dtype=DataType.DT_FLOAT, placement="NPU")
            res = ge.Add(x1, x2)
            ge.Assign(x1, res)
            ge.NetOutput([res, ge.Sub(res, x2)])
            executor = TorchNpuGraph()
            executor.load(graph)
            executor.compile()
        a, b = torch.ones(3, 4), torch.full((3, 4), 2.0)
        out = torch.empty(3, 4)
        first, second = executor.run([a, b], [out, None])
    assert first is out and torch.equal(out, torch.full((3, 4), 3.0))
    assert torch.equal(a, torch.full((3, 4), 3.0))  # Assign wrote the input in place
    assert torch.equal(second, torch.ones(3, 4))


def test_an_op_type_sim_cannot_run_is_named_with_its_node() -> None:
    import torch

    with _session():
        from torchair._ge_concrete_graph import ge_apis as ge
        from torchair.core._backend import TorchNpuGraph
        from torchair.ge._ge_graph import DataType, GeGraph

        with GeGraph() as graph:
            x = ge.Data(index=0, shape=[2], dtype=DataType.DT_FLOAT, placement="CPU")
            ge.NetOutput([ge.Dawsn(x, node_name="my_dawsn")])
            executor = TorchNpuGraph("g")
            executor.load(graph)
            executor.compile()
        with pytest.raises(RuntimeError, match=r"no CPU kernel for op type\(s\) Dawsn \(my_dawsn\)") as info:
            executor.run([torch.ones(2)])
    assert "Fix: sim runs the GE op types of airctl/execute/ge_ops.py" in str(info.value)


def test_cache_compile_saves_then_a_new_model_reloads_and_runs_the_ge_graph(tmp_path: Path) -> None:
    import torch

    from airctl.execute.recorder import Recorder
    from airctl.pipeline.run.execution import RunExecution

    runs = RunExecution()
    with _session(runs) as torchair, runs.recording(Recorder(keep_events=True)) as rec:
        class Model(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.linear = torch.nn.Linear(4, 3)
                self.cached = torchair.inference.cache_compile(self.inner, cache_dir=str(tmp_path), dynamic=False)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.cached(x)

            def inner(self, x: torch.Tensor) -> torch.Tensor:
                return torch.relu(self.linear(x)) * 2 - x.sum()

        torch.manual_seed(0)
        first = Model()
        x = torch.randn(5, 4)
        eager = first.inner(x)
        torch.testing.assert_close(first(x), eager)
        saved = list(tmp_path.rglob("compiled_module"))
        assert saved, "cache_compile saved nothing"
        torch._dynamo.reset()
        second = Model()  # the same weights: a fresh model that loads the saved graph, no compile
        second.load_state_dict(first.state_dict())
        torch.testing.assert_close(second(x), eager)
        x2 = torch.randn(5, 4)
        torch.testing.assert_close(second(x2), second.inner(x2))
    ops = {e.op for t in rec.timelines.values() for e in t.events}
    assert "ge.Relu" in ops, ops  # the reloaded code ran the GE graph's own ops, no FX graph behind it


def test_dynamo_export_writes_the_pbtxt_and_the_air_model(tmp_path: Path) -> None:
    import torch

    from airctl.io.ge_schema import message_class

    with _session() as torchair:
        class Model(torch.nn.Module):
            def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
                return x + y

        torchair.dynamo_export(torch.randn(2, 4), torch.randn(2, 4), model=Model(), export_path=str(tmp_path),
                               dynamic=False)
    pbtxt = list(tmp_path.glob("dynamo*.pbtxt"))
    assert pbtxt and pbtxt[0].read_text().count('op: "Data"') == 2
    model = message_class("ModelDef").FromString((tmp_path / "export.air").read_bytes())
    assert [op.type for op in model.graph[0].op].count("Add") == 1

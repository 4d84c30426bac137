"""The per-graph execution check of ``airctl run`` (airctl/pipeline/script/check.py)."""

from __future__ import annotations

from contextlib import nullcontext

import pytest

torch = pytest.importorskip("torch")

from airctl.pipeline.script.check import GraphCheck, copy_graph_module, run_summary  # noqa: E402


def traced(fn):  # noqa: ANN001, ANN201
    return torch.fx.symbolic_trace(fn)


def test_matching_graph_is_recorded_on_its_first_call_only() -> None:
    gm = traced(lambda x: torch.abs(x) + 1)
    records = []
    check = GraphCheck(1, copy_graph_module(gm), lambda n, s: records.append((n, s)), nullcontext)
    compiled = check.wrap(lambda x: (torch.abs(x) + 1,))
    x = torch.randn(4)
    compiled(x)
    compiled(x)
    assert check.calls == 2 and len(records) == 1
    number, summary = records[0]
    assert number == 1 and summary["matches_eager"] is True and summary["calls_checked"] == 1


def test_a_changed_result_is_a_mismatch_and_the_compiled_output_is_returned() -> None:
    gm = traced(lambda x: x * 2)
    check = GraphCheck(3, copy_graph_module(gm), lambda n, s: None, nullcontext)
    out = check.wrap(lambda x: (x * 3,))(torch.ones(2))
    assert torch.equal(out[0], torch.full((2,), 3.0))
    summary = run_summary([check])
    assert summary["matches_eager"] is False and summary["mismatches"][0].startswith("graph 3: ")


def test_reference_treats_wait_tensor_as_ges_identity_and_does_not_touch_inputs() -> None:
    from airctl.sim.session import load_torchair

    load_torchair()
    import torchair.scope._wait_tensor  # noqa: F401 - TorchAir defines the op on first use of npu_wait_tensor

    graph = torch.fx.Graph()
    a, b = graph.placeholder("a"), graph.placeholder("b")
    waited = graph.call_function(torch.ops.air.wait_tensor.default, (a, b))
    out = graph.call_function(torch.ops.aten.add_.Tensor, (waited, 1))
    graph.output((out,))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    check = GraphCheck(1, copy_graph_module(gm), lambda n, s: None, nullcontext)
    a_in = torch.zeros(2)
    check.wrap(lambda a, b: (a + 1,))(a_in, torch.ones(2))
    assert torch.equal(a_in, torch.zeros(2))  # the reference ran on clones
    assert check.summary()["matches_eager"] is True

"""Every op TorchAir cannot convert, read from its own converter table (no GE graph is built)."""

from __future__ import annotations

import pytest

from airctl.graph.model import Graph, Node


def _graph(*ops: tuple[str, str | None]) -> Graph:
    nodes = [Node(name="x", op="placeholder", kind="placeholder")]
    nodes += [Node(name=f"n{i}", op=op, kind="call_function", source=src) for i, (op, src) in enumerate(ops)]
    return Graph(name="g", dialect="fx", nodes=nodes)


@pytest.fixture(scope="module")
def torchair():
    from airctl.backends.sim import sim_context
    from airctl.pipeline.run.execution import RunExecution
    from airctl.sim.session import session

    with session(sim_context(RunExecution())) as loaded:
        yield loaded


def test_missing_stub_and_known_failing_converters_are_all_named(torchair) -> None:
    from airctl.verify.converter_coverage import unconvertible_ops

    moe = "/site-packages/transformers/integrations/moe.py:449"
    found = unconvertible_ops(_graph(("aten.add.Tensor", "m.py:1"), ("aten.histc.default", moe),
                                     ("aten.silu_backward.default", "act.py:3"), ("aten.histc.default", "m.py:9"),
                                     ("npu.npu_fusion_attention_grad.default", "sdpa.py:5"), ("getitem", None)))
    by_op = {u.op: u for u in found}
    assert list(by_op) == ["aten.histc.default", "aten.silu_backward.default",
                           "npu.npu_fusion_attention_grad.default"]
    histc = by_op["aten.histc.default"]
    assert histc.reason == "no converter" and "auto-generation refused" in histc.detail
    assert histc.nodes == ["n1", "n3"] and histc.source == moe  # the first node's line
    assert "experts_implementation" in histc.workaround  # made by transformers' MoE: its switch
    assert by_op["aten.silu_backward.default"].reason == "stub"
    assert "custom_decompositions" in by_op["aten.silu_backward.default"].workaround
    assert by_op["npu.npu_fusion_attention_grad.default"].reason == "converter fails"
    assert by_op["npu.npu_fusion_attention_grad.default"].to_json()["count"] == 1


def test_a_graph_torchair_converts_has_nothing_to_say(torchair) -> None:
    from airctl.verify.converter_coverage import summary, unconvertible_ops

    assert unconvertible_ops(_graph(("aten.mm.default", None), ("aten.add.Tensor", None))) == []
    assert summary([]).startswith("0 op(s)")


def test_ops_that_do_not_resolve_are_not_blamed() -> None:
    from airctl.verify.converter_coverage import resolve_target

    assert resolve_target("aten.mm.default") is not None
    assert resolve_target("no_such_namespace.op.default") is None
    assert resolve_target("getitem") is None

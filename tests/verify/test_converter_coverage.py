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


def _typed(*nodes: tuple[str, str, list[str]]) -> Graph:
    """Placeholders ``a`` (int64), ``b`` (bool), ``c`` (int64), then (name, op, argument names)."""
    graph = [Node(name=n, op="placeholder", kind="placeholder", meta={"tensors": [{"shape": [2], "dtype": t}]})
             for n, t in (("a", "int64"), ("b", "bool"), ("c", "int64"))]
    graph += [Node(name=name, op=op, kind="call_function", inputs=args, attrs={"args": [f"%{a}" for a in args]},
                   source="m.py:7") for name, op, args in nodes]
    return Graph(name="g", dialect="fx", nodes=graph)


def test_an_op_whose_converter_needs_one_dtype_is_a_blocker_only_where_its_inputs_differ(torchair) -> None:
    """aten.eq.Tensor's converter raises "Inputs data type mismatch" for int64 vs bool (Llama 4)."""
    from airctl.verify.converter_coverage import unconvertible_ops

    (found,) = unconvertible_ops(_typed(("eq", "aten.eq.Tensor", ["a", "b"]), ("eq_1", "aten.eq.Tensor", ["a", "c"]),
                                        ("polar", "aten.polar.default", ["a", "c"])))[:1]
    assert (found.op, found.reason, found.nodes) == ("aten.eq.Tensor", "converter fails", ["eq"])
    assert "int64 vs bool" in found.detail and found.workaround is not None and ".to(" in found.workaround
    everything = [u.op for u in unconvertible_ops(_typed(("eq", "aten.eq.Tensor", ["a", "b"]),
                                                         ("polar", "aten.polar.default", ["a", "c"])))]
    assert everything == ["aten.eq.Tensor", "aten.polar.default"]  # every blocker, in one list
    assert unconvertible_ops(_typed(("eq_1", "aten.eq.Tensor", ["a", "c"]))) == []


def test_torchairs_dtype_numbers_are_said_with_the_graphs_dtype_names(torchair) -> None:
    from airctl.pipeline.compile.converter_errors import dtype_words

    graph = _typed(("eq", "aten.eq.Tensor", ["a", "b"]))
    said = dtype_words("AssertionError: Inputs data type mismatch 12 vs. 12", graph, graph.get("eq"))
    assert said == "AssertionError: Inputs data type mismatch: int64 vs bool (inputs of eq, aten.eq.Tensor)"


def test_a_channels_last_clone_from_interpolate_says_contiguous(torchair, tmp_path) -> None:  # noqa: ANN001
    """SegFormer, DINOv2: F.interpolate on a channels_last tensor makes a clone TorchAir's converter refuses."""
    from airctl.verify.converter_coverage import unconvertible_ops

    model = tmp_path / "model.py"
    model.write_text("y = conv(x)\ny = F.interpolate(y, scale_factor=2)\n")
    nodes = [Node(name="x", op="placeholder", kind="placeholder"),
             Node(name="clone", op="aten.clone.default", kind="call_function", inputs=["x"],
                  attrs={"args": ["%x"], "kwargs": {"memory_format": "torch.channels_last"}}, source=f"{model}:2"),
             Node(name="clone_1", op="aten.clone.default", kind="call_function", inputs=["x"],
                  attrs={"args": ["%x"], "kwargs": {"memory_format": "torch.channels_last"}}, source=f"{model}:1"),
             Node(name="clone_2", op="aten.clone.default", kind="call_function", inputs=["x"], attrs={"args": ["%x"]})]
    (found,) = unconvertible_ops(Graph(name="g", dialect="fx", nodes=nodes))
    assert (found.reason, found.nodes) == ("converter fails", ["clone", "clone_1"])
    assert "channels_last" in found.detail
    assert found.workaround is not None and ".contiguous() on the tensor before F.interpolate" in found.workaround


def test_weight_norm_says_how_to_fold_it_for_the_module_that_has_it(torchair) -> None:
    """SEW's positional conv: weight norm has no converter; remove_parametrizations folds it."""
    from airctl.verify.converter_coverage import unconvertible_ops

    node = Node(name="wn", op="aten._weight_norm_interface.default", kind="call_function",
                module="encoder.pos_conv_embed.conv.parametrizations.weight.0")
    (found,) = unconvertible_ops(Graph(name="g", dialect="fx", nodes=[node]))
    assert found.workaround is not None
    assert 'torch.nn.utils.parametrize.remove_parametrizations(model.encoder.pos_conv_embed.conv, "weight")' \
        in found.workaround

"""Reading live FX graphs: targets, inputs, TorchAir's stream-scope rule, source lines."""

from __future__ import annotations

import pytest

from airctl.graph.model import Graph, Node
from airctl.io.fx_reader import module_of, read_fx, scope_stream, source_of, target_name
from airctl.io.json_io import from_dict, to_dict


@pytest.fixture(scope="module")
def air_ops():
    from airctl.sim.session import load_torchair

    load_torchair()
    import torch

    return torch


def _seed_graph(torch, nested: bool = False):
    import torch.fx as fx

    g = fx.Graph()
    x = g.placeholder("x")
    g.call_function(torch.ops.air.scope_enter.default, (["_user_stream_label"], ["s1"]))
    if nested:
        keys = ["_user_stream_label", "_user_stream_priority"]
        g.call_function(torch.ops.air.scope_enter.default, (keys, ["s2", "0"]))
    mm = g.call_function(torch.ops.aten.mm.default, (x, x))
    if nested:
        g.call_function(torch.ops.air.scope_exit.default, ())
    ab = g.call_function(torch.ops.aten.abs.default, (mm,))
    rec = g.call_function(torch.ops.air.record.default, ())
    g.call_function(torch.ops.air.scope_exit.default, ())
    g.call_function(torch.ops.air.wait.default, ([rec],))
    sub = g.call_function(torch.ops.aten.sub.Tensor, (x, mm))
    g.output((ab, sub))
    return fx.GraphModule(torch.nn.Module(), g)


def test_streams_follow_scopes(air_ops) -> None:
    graph = read_fx(_seed_graph(air_ops))
    streams = {n.name: n.stream for n in graph.nodes}
    assert streams["mm_default"] == "s1" and streams["abs_default"] == "s1" and streams["record_default"] == "s1"
    assert streams["scope_exit_default"] == "s1", "the exit belongs to the scope it closes"
    assert streams["wait_default"] is None and streams["sub_tensor"] is None
    ops = {n.name: n.op for n in graph.nodes}
    assert ops["scope_enter_default"] == "air.scope_enter.default" and ops["mm_default"] == "aten.mm.default"
    assert graph.node("sub_tensor").inputs == ["x", "mm_default"]
    kinds = {(e.src, e.dst): e.kind for e in graph.edges()}
    assert kinds[("record_default", "wait_default")] == "sync"


def test_nested_scopes_take_the_innermost_label(air_ops) -> None:
    graph = read_fx(_seed_graph(air_ops, nested=True))
    assert graph.node("mm_default").stream == "s2"
    assert graph.node("abs_default").stream == "s1"


def test_scope_args_that_are_not_lists_have_no_stream() -> None:
    assert scope_stream(("_user_stream_label", "s1")) is None
    assert scope_stream((["_user_stream_priority", "_user_stream_label"], ["0", "s9"])) == "s9"


def test_target_names_and_source_lines(air_ops) -> None:
    import operator

    assert target_name(air_ops.ops.aten.add.Tensor) == "aten.add.Tensor"
    assert target_name(operator.getitem) == "getitem"
    trace = 'File "/lib/torch/x.py", line 3, in f\n  File "/home/u/model.py", line 12, in forward\n    y = x'
    assert source_of({"stack_trace": trace}) == "/home/u/model.py:12"


def test_json_round_trip() -> None:
    g = Graph("g", "ge", [Node("a", "Data"), Node("b", "Abs", inputs=["a:0"], control_inputs=["a"], stream="s1",
                                                     attrs={"_user_stream_label": "s1"})])
    assert from_dict(to_dict(g)) == g


@pytest.mark.parametrize("dynamo, path", [
    ("L['self'].layers.0.attn", "layers.0.attn"),  # the model's own forward compiled
    ("L['args'][0].model.layers.1.mlp", "model.layers.1.mlp"),  # a decorator's wrapper(*args) in front (transformers)
    ("L['model']._modules['blocks'].x", "blocks.x"),  # a step function's argument
    ("G['net'].a", "a"),  # a global
    ("L['self']", None),  # the model itself
    ("layers.0", "layers.0"),
])
def test_module_paths_are_relative_to_the_model(dynamo: str, path: str | None) -> None:
    assert module_of({"nn_module_stack": {"k": (dynamo, object)}}) == path

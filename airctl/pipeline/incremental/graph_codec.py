"""The AOT graph TorchAir received, as JSON and back: what an incremental apply starts from.

A full compile keeps the pre-pass graph (the GraphModule AOT handed TorchAir's compiler, before
any pass) so that a later loop command on the same model can skip Dynamo and AOT
(docs/incremental.md). No pickle: each node is written as its name, op, target (an ATen op by
its qualified name, or one of a few Python operators), arguments (nodes by name, plain values,
dtypes, devices, ...) and the meta TorchAir and airctl read — source lines, module paths (with
the module class checked against the live model), ``source_fn_stack``, ``original_aten``,
``seq_nr``, ``partitioner_tag``, ``from_node``, AOT's descriptors. Tensor metadata (``val``,
``tensor_meta``) is not stored: :func:`decode` recomputes it by fake-tensor propagation and
:func:`check_vals` compares it with the shapes, strides and dtypes written. Anything else
(an op that is not ATen, a module call, a meta key not listed) raises :class:`Unsupported`, and
the command compiles in full. Constant tensors (``get_attr``) are kept in safetensors beside the JSON.
"""

from __future__ import annotations

import operator
from typing import Any

from airctl.pipeline.incremental.graph_meta import decode_meta, encode_meta, fakes_in
from airctl.pipeline.incremental.graph_values import Unsupported, decode_value, encode_value, op_name, op_of, val_check

FORMAT = "airctl-pre-pass-graph"
VERSION = 1
_OPERATORS = {f"operator.{n}": getattr(operator, n) for n in ("getitem", "add", "sub", "mul", "truediv",
                                                                "floordiv", "neg", "eq", "ne", "lt", "le",
                                                                "gt", "ge")}

__all__ = ["Unsupported", "check_vals", "decode", "encode"]


def encode(gm: Any, script: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The GraphModule as JSON, and its constant tensors by name (raises :class:`Unsupported`);
    ``script``: the model script's module name, written as :data:`SCRIPT`."""
    import torch

    nodes = []
    constants: dict[str, Any] = {}
    for n in gm.graph.nodes:
        if n.op == "get_attr":
            value = getattr(gm, str(n.target), None) if "." not in str(n.target) else None
            if type(value) is not torch.Tensor or not value.is_contiguous() or value.requires_grad:
                raise Unsupported(f"node {n.name} reads {type(value).__name__} {n.target}")
            constants[str(n.target)] = value  # read out when written, outside AOT's fake mode
        elif n.op in ("call_module", "call_method"):
            raise Unsupported(f"node {n.name} is a {n.op}")
        if n.op == "call_function":
            target = op_name(n.target)
            if target is None:
                target = ".".join(["operator", n.target.__name__]) if n.target in _OPERATORS.values() else None
            if target is None:
                raise Unsupported(f"node {n.name} calls {n.target!r}")
        else:
            target = n.target
        nodes.append({"name": n.name, "op": n.op, "target": target, "args": encode_value(n.args),
                      "kwargs": encode_value(n.kwargs), "meta": encode_meta(n, script)})
    return {"format": FORMAT, "version": VERSION, "class_name": type(gm).__name__, "nodes": nodes,
            "constants": sorted(constants)}, constants


def decode(data: dict[str, Any], model: Any, constants: dict[str, Any], script: str) -> Any:
    """The GraphModule :func:`encode` wrote, with its ``constants``; vals are filled by :func:`check_vals`."""
    import torch

    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise Unsupported("the kept graph is of another format or version")
    graph = torch.fx.Graph()
    nodes: dict[str, Any] = {}
    classes: dict[tuple[str, str, str], type] = {}
    for raw in data["nodes"]:
        op, target = raw["op"], raw["target"]
        if op == "call_function":
            target = _OPERATORS.get(target) or op_of(target)
        elif op == "get_attr" and target not in constants:
            raise Unsupported(f"the constant {target} was not kept")
        elif op not in ("placeholder", "output", "get_attr"):
            raise Unsupported(f"node op {op!r}")
        node = graph.create_node(op, target, decode_value(raw["args"], nodes), decode_value(raw["kwargs"], nodes),
                                 name=raw["name"])
        if node.name != raw["name"]:
            raise Unsupported(f"node {raw['name']} came back as {node.name}")
        node.meta = decode_meta(raw["meta"], model, script, classes)
        nodes[node.name] = node
    if sorted(constants) != data.get("constants", []):
        raise Unsupported("the kept constants are not the graph's")
    root = torch.nn.Module()
    for name, value in constants.items():
        setattr(root, name, value)
    return torch.fx.GraphModule(root, graph, class_name=str(data.get("class_name") or "GraphModule"))


def check_vals(gm: Any, data: dict[str, Any], fake_inputs: list[Any]) -> None:
    """Fake-tensor propagation of ``gm`` from ``fake_inputs``; every value must have the shape,
    strides, dtype, offset and ``requires_grad`` written (raises :class:`Unsupported` where one differs)."""
    import torch
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp
    from torch.fx.passes.shape_prop import _extract_tensor_metadata
    from torch.utils._pytree import tree_map_only

    mode = fake_inputs[0].fake_mode if fake_inputs else None
    FakeTensorProp(gm, mode=mode).propagate_dont_convert_inputs(*fake_inputs)
    for node, raw in zip(gm.graph.nodes, data["nodes"], strict=True):
        keys = raw["meta"]["keys"]
        if "val" not in keys:
            node.meta.pop("val", None)
            continue
        got = val_check(node.meta.get("val"))
        if got != raw["meta"]["val_check"]:
            raise Unsupported(f"node {node.name}: fake-tensor propagation gave {got}, "
                              f"the kept graph {raw['meta']['val_check']}")
        if "tensor_meta" in keys:
            node.meta["tensor_meta"] = tree_map_only(torch.Tensor, _extract_tensor_metadata, node.meta["val"])
    for node in gm.graph.nodes:
        if "eager_input_vals" in node.meta:
            node.meta["eager_input_vals"] = fakes_in(node.meta["eager_input_vals"], mode)

"""A GE graph (airctl's graph model, dialect ``ge``) as an FX GraphModule the multi-stream executor runs.

Sim runs every graph on one executor (:class:`~airctl.execute.executor.StreamExecutor`: a
thread per stream, record/wait as events, races checked, timed lanes for ``airctl profile``).
A GE graph with no FX graph behind it — built with ``torchair.ge``'s API, reloaded by
``cache_compile``, imported from an NPU machine's dumps — reaches that executor by being
written as an FX graph of the same ops, in a topological order of its data and control edges:

- ``Data``/``RefData`` -> placeholders, in ``index`` order (the GE inputs list);
- ``Const`` -> a ``get_attr`` of its value (the payload, when the graph carries it);
- every other op -> a call of its kernel (:mod:`airctl.execute.ge_ops`), named after the op
  (``ge.MatMulV2``); an output ``k`` of a multi-output op is ``getitem(op, k)``;
- ``_user_stream_label`` -> the op inside an ``air.scope_enter``/``scope_exit`` of that label, so
  the executor runs it on that stream (as TorchAir's own scopes do in an FX graph);
- a control edge between two streams -> an ``air.wait`` on the producer just before the consumer
  (GE orders control edges across streams; on one stream graph order already does);
- ``NetOutput`` -> the output, a tuple of its inputs in order.

An op type with no kernel is refused before anything runs: :func:`unsupported` names every such
type with its nodes, and :func:`build` raises :class:`GeGraphError` listing them with a fix.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from airctl.errors import AirctlError
from airctl.execute import ge_ops
from airctl.graph.model import STREAM_LABEL, Graph, Node

_INPUT_TYPES = ("Data", "RefData")


class GeGraphError(AirctlError):
    """A GE graph sim cannot run (an op type it has no kernel for, a malformed graph)."""


@dataclass
class GeProgram:
    """A GE graph lowered for the executor: ``gm`` takes the GE inputs and returns the NetOutput tuple."""

    gm: Any
    n_inputs: int
    notes: list[str] = field(default_factory=list)


class GeKernel:
    """One GE op type's kernel as an FX call target; FX and airctl name it ``ge.<type>``."""

    def __init__(self, op_type: str) -> None:
        self.op_type = op_type
        self.fn = ge_ops.KERNELS[op_type]
        self.__name__ = self.__qualname__ = op_type
        self.__module__ = "ge"

    def __call__(self, *inputs: Any, attrs: dict[str, Any] | None = None) -> Any:
        return self.fn(inputs, attrs or {})

    def __repr__(self) -> str:
        return f"ge.{self.op_type}"


def unsupported(graph: Graph) -> dict[str, list[str]]:
    """Op types sim has no kernel for, each with the names of its nodes (graph order)."""
    missing: dict[str, list[str]] = {}
    for node in graph.nodes:
        if not ge_ops.runnable(node.op):
            missing.setdefault(node.op, []).append(node.name)
    return missing


def unsupported_message(graph: Graph, missing: Mapping[str, list[str]]) -> str:
    parts = [f"{op} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})" for op, names in missing.items()]
    return f"sim cannot run GE graph {graph.name}: no CPU kernel for op type(s) {'; '.join(parts)}"


UNSUPPORTED_HINT = ("sim runs the GE op types of airctl/execute/ge_ops.py (docs/sim.md, 'GE graphs without an FX "
                    "graph'); add a kernel for the type there, or run the graph through torch.compile so sim "
                    "executes the FX graph TorchAir converted")


def _order(graph: Graph) -> list[Node]:
    """Graph order where it is topological; else a stable topological order of data and control edges."""
    names = {n.name for n in graph.nodes}
    deps = {n.name: {Node.producer(r) for r in [*n.inputs, *n.control_inputs] if r and Node.producer(r) in names}
            for n in graph.nodes}
    done: set[str] = set()
    order: list[Node] = []
    pending = list(graph.nodes)
    while pending:
        rest = []
        for n in pending:
            if deps[n.name] <= done:
                order.append(n)
                done.add(n.name)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise GeGraphError(f"GE graph {graph.name} has a cycle through {', '.join(n.name for n in rest[:5])}",
                               hint="a GE graph must be acyclic over its data and control edges")
        pending = rest
    return order


def tensor_from_bytes(data: bytearray, dtype: Any, shape: list[int]) -> Any:
    """A tensor of ``dtype`` and ``shape`` over a Const's bytes (none: an empty one, reshaped)."""
    import torch

    flat = torch.frombuffer(data, dtype=dtype) if data else torch.empty(0, dtype=dtype)
    return flat.reshape(shape)


def const_value(node: Node, payloads: Mapping[str, Any], notes: list[str]) -> Any:
    """A Const's tensor: its payload when given, else the dump's bytes (``hex``), else zeros (noted)."""
    import torch

    if node.name in payloads:
        return payloads[node.name]
    value = node.attrs.get("value")
    if not isinstance(value, dict):
        raise GeGraphError(f"Const {node.name} has no value", node=node.name)
    dtype = ge_ops.torch_dtype(value.get("dtype", 0), proto=True)
    shape = [int(d) for d in value.get("shape", [])]
    if "hex" in value:
        return tensor_from_bytes(bytearray.fromhex(value["hex"]), dtype, shape).clone()
    notes.append(f"Const {node.name}: the dump keeps no data ({value.get('bytes')} bytes); zeros stand in")
    return torch.zeros(shape, dtype=dtype)


def build(graph: Graph, payloads: Mapping[str, Any] | None = None) -> GeProgram:
    """Lower ``graph`` (dialect ``ge``) to a :class:`GeProgram`; ``payloads``: Const name -> tensor."""
    import torch
    import torch.fx

    missing = unsupported(graph)
    if missing:
        raise GeGraphError(unsupported_message(graph, missing), hint=UNSUPPORTED_HINT,
                           node=next(iter(missing.values()))[0])
    notes: list[str] = []
    fx = torch.fx.Graph()
    root = torch.nn.Module()
    inputs = [n for n in graph.nodes if n.op in _INPUT_TYPES]
    n_inputs = max((int(n.attrs.get("index", i)) for i, n in enumerate(inputs)), default=-1) + 1
    placeholders = [fx.placeholder(f"ge_input_{i}") for i in range(n_inputs)]
    values: dict[str, Any] = {}  # GE node name -> FX node (its value: a tensor or a tuple)
    streams = {n.name: n.stream for n in graph.nodes}
    current: list[str | None] = [None]  # the stream scope open in the FX graph
    outputs: list[Any] | None = None
    items: dict[tuple[str, int], Any] = {}  # (multi-output op, k) -> its getitem node

    def ref(r: str) -> Any:
        if not r:
            return None  # an optional input left out
        name, _, idx = r.rpartition(":")
        if not _ or not idx.lstrip("-").isdigit():
            name, idx = r, "0"
        if name not in values:
            raise GeGraphError(f"GE graph {graph.name}: input {r!r} names no op", node=name)
        value, k = values[name], int(idx)
        if value.meta.get("ge_type") not in ge_ops.MULTI_OUTPUT:
            return value
        if (name, k) not in items:
            items[name, k] = fx.call_function(operator.getitem, (value, k))
        return items[name, k]

    def enter(stream: str | None) -> None:
        if stream == current[0]:
            return
        air = torch.ops.air
        if current[0] is not None:
            fx.call_function(air.scope_exit.default, ())
        if stream is not None:
            fx.call_function(air.scope_enter.default, ([STREAM_LABEL], [stream]))
        current[0] = stream

    for node in _order(graph):
        if node.op in _INPUT_TYPES:
            values[node.name] = placeholders[int(node.attrs.get("index", inputs.index(node)))]
            continue
        if node.op in ("Const", "Constant"):
            attr = f"ge_const_{len(root._buffers)}"
            root.register_buffer(attr, const_value(node, payloads or {}, notes))
            values[node.name] = fx.get_attr(attr)
            continue
        enter(node.stream)
        for c in node.control_inputs:
            src = Node.producer(c)
            if src in values and streams.get(src) != node.stream:
                fx.call_function(torch.ops.air.wait.default, ([values[src]],))
        args = tuple(ref(r) for r in node.inputs)
        if node.op == "NetOutput":
            outputs = list(args)
            continue
        attrs = {k: v for k, v in node.attrs.items() if not k.startswith("_")}
        call = fx.create_node("call_function", GeKernel(node.op), args, {"attrs": attrs} if attrs else {},
                              name=_fx_name(node.name))
        call.meta["ge_type"] = node.op
        values[node.name] = call
    enter(None)
    if outputs is None:
        raise GeGraphError(f"GE graph {graph.name} has no NetOutput", hint="end the graph with ge.NetOutput([...])")
    fx.output(tuple(outputs))
    gm = torch.fx.GraphModule(root, fx, class_name=f"GeGraph_{_identifier(graph.name)}")
    return GeProgram(gm, n_inputs, notes)


def _identifier(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name) or "graph"


def _fx_name(wanted: str) -> str:
    """A name FX accepts for the GE op (FX makes it unique)."""
    candidate = _identifier(wanted)
    return f"op_{candidate}" if candidate[0].isdigit() else candidate

"""Runs a loaded GE graph from its own ops, for ``TorchNpuGraph.run`` calls no FX graph stands behind.

``torch.compile`` graphs run their converted FX graph (:mod:`.patched_ge_concrete_graph_call`).
Every other GE graph reaches the ``_torchair`` stand-in as bytes only: graphs built with
``torchair.ge``'s API and loaded into ``TorchNpuGraph`` by hand, and the code ``cache_compile``
saved and reloads (``GeGraph(serialized_model_def=...)``, then ``load``/``compile``/``run``). For
those, ``run`` parses the serialized ``ModelDef``'s graph into airctl's graph model
(:func:`airctl.io.ge_proto.graph_from_ge_proto`), lowers it once per loaded graph
(:mod:`airctl.execute.ge_program`: GE op types to CPU kernels, streams to stream scopes) and
executes it on the multi-stream executor:

- inside a sim session, on the session's executors (``SimContext.run_ge``: the run's recorder,
  races, ``airctl profile``'s lanes), which the session sets as :data:`RUN_FX_ATTR` on the
  stand-in's class;
- outside one, on a private executor of the graph, with races logged as warnings.

Outputs are returned in NetOutput order; an ``assigned_outputs`` slot holding a tensor receives
its output in place and is returned itself, as TorchAir's C++ executor does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from airctl.execute.ge_program import GeGraphError, GeProgram, build, tensor_from_bytes
from airctl.graph.model import Graph
from airctl.io.ge_proto import graph_from_ge_proto
from airctl.io.ge_schema import message_class

RUN_FX_ATTR = "_airctl_run_fx"  # the class attribute a session sets: (gm, args, name) -> outputs
_PROGRAM_ATTR = "_airctl_ge_program"

RunFx = Callable[[Any, Sequence[Any], str], Sequence[Any]]


def const_payloads(graph_def: Any) -> dict[str, Any]:
    """Each Const op's value as a tensor, from the serialized bytes (the graph model keeps small ones only)."""
    from airctl.execute.ge_ops import torch_dtype

    out: dict[str, Any] = {}
    for op in graph_def.op:
        if op.type not in ("Const", "Constant") or "value" not in op.attr:
            continue
        t = op.attr["value"].t
        dtype = torch_dtype(int(t.desc.dtype), proto=True)
        out[op.name] = tensor_from_bytes(bytearray(t.data), dtype, [int(d) for d in t.desc.shape.dim])
    return out


def parse_graph(serialized: bytes, name: str) -> tuple[Any, Graph]:
    """The ``GraphDef`` of what TorchAir serializes (a ``ModelDef`` holding one graph, ``GeGraph``), and the
    graph model of it."""
    model = message_class("ModelDef").FromString(serialized)
    if not model.graph:
        raise RuntimeError("sim: the serialized GE model holds no graph")
    graph_def = model.graph[0]
    return graph_def, graph_from_ge_proto(graph_def, name or graph_def.name or "graph")


def program_of(serialized: bytes, name: str) -> GeProgram:
    """The lowered program of one serialized GE model."""
    graph_def, graph = parse_graph(serialized, name)
    return build(graph, const_payloads(graph_def))


def _private_run_fx(program: GeProgram) -> RunFx:
    from airctl.execute.executor import StreamExecutor
    from airctl.modes import Mode

    executor: list[StreamExecutor] = []

    def run(gm: Any, args: Sequence[Any], name: str) -> Sequence[Any]:
        if not executor:
            executor.append(StreamExecutor(gm, Mode.MAX_AUTOTUNE, name))
        return executor[0].run(list(args))

    return run


def run_loaded(graph: Any, inputs: Sequence[Any], assigned_outputs: Sequence[Any] | None) -> list:
    """``TorchNpuGraph.run`` of ``graph`` (the stand-in base) from its serialized GE graph."""
    if graph.serialized is None:
        raise RuntimeError(f"sim: GE graph {graph.name or '(unnamed)'} was run before it was loaded")
    cached = graph.__dict__.get(_PROGRAM_ATTR)
    if cached is None or cached[0] is not graph.serialized:
        try:
            program = program_of(graph.serialized, graph.name)
        except GeGraphError as e:  # TorchAir re-raises what run raises with its message only: keep the fix in it
            raise RuntimeError(f"sim: {e}. Fix: {e.hint}" if e.hint else f"sim: {e}") from e
        cached = (graph.serialized, program, _private_run_fx(program))
        graph.__dict__[_PROGRAM_ATTR] = cached
    _, program, private = cached
    run_fx: RunFx = getattr(type(graph), RUN_FX_ATTR, None) or private
    args = list(inputs)
    if len(args) < program.n_inputs:
        raise RuntimeError(f"sim: GE graph {graph.name or '(unnamed)'} takes {program.n_inputs} inputs, "
                           f"{len(args)} given")
    outputs = list(run_fx(program.gm, args, graph.name or "ge_graph"))
    for k, assigned in enumerate(assigned_outputs or []):
        if k >= len(outputs) or assigned is None or outputs[k] is None or assigned is outputs[k]:
            continue
        if assigned.shape != outputs[k].shape:
            assigned.resize_(outputs[k].shape)
        assigned.copy_(outputs[k])
        outputs[k] = assigned
    return outputs

"""Patch of one TorchAir internal: ``GeConcreteGraph.__call__`` (sim only).

TorchAir's own ``__call__`` still does all of its work — input processing, the
``dynamo_optimized_graph`` dump, ``load``/``compile`` of the GE graph, output mapping — and
calls ``TorchNpuGraph.run`` on our ``_torchair`` stand-in. That stand-in cannot run a GE graph;
what it needs is the FX graph TorchAir converted and the FX-level arguments of this call. For
the length of the call, this wrapper gives the graph's stand-in executor a runner that executes
``fx_graph`` on those arguments (``run_fx``, the session's multi-stream executor) and maps FX
outputs to GE output slots with TorchAir's own ``_fx_outputs_mapping``. When GE's build allocated
streams (``ge.autoMultistreamParallelMode``, :mod:`airctl.sim.ge_build`), the FX graph runs with each
node on its GE op's stream.

An FX graph with an op torch has no CPU kernel for (a custom op with a Meta kernel only, one with a
PrivateUse1 kernel only) cannot run on the CPU, but its converter told GE what to compute. Such a
graph runs as GE would, from the GE graph's own ops (:func:`airctl.sim.ge_graph_runner.run_loaded`);
a GE op sim has no kernel for is then named in the error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from airctl.graph.model import STREAM_NAMESPACES
from airctl.hooks.patching import Patches
from airctl.sim.torchair_core import RUNNER_ATTR

# how a converted graph executes: (graph_module, fx_args, graph_name) -> tuple of outputs
RunFx = Callable[[Any, Sequence[Any], str], Sequence[Any]]


def patch(p: Patches, run_fx: RunFx) -> None:
    from torchair._ge_concrete_graph.fx2ge_converter import GeConcreteGraph

    original = GeConcreteGraph.__call__

    def call_with_fx_args(self: Any, *args: Any, **kwargs: Any) -> Any:
        executor = self.graph._executor  # TorchAir's TorchNpuGraph: our stand-in's subclass
        setattr(executor, RUNNER_ATTR, _runner(self, args, executor.name, run_fx))
        try:
            return original(self, *args, **kwargs)
        finally:
            executor.__dict__.pop(RUNNER_ATTR, None)

    p.setattr(GeConcreteGraph, "__call__", call_with_fx_args)


def _runner(concrete: Any, fx_args: Sequence[Any], name: str,
            run_fx: RunFx) -> Callable[[Sequence[Any], Sequence[Any]], list]:
    def run(inputs: Sequence[Any], assigned_outputs: Sequence[Any]) -> list:
        gm = concrete.fx_graph
        missing = cpu_less_ops(gm)
        if missing:
            return _run_ge_ops(concrete.graph._executor, inputs, assigned_outputs, missing)
        built = getattr(concrete.graph._executor, "ge_build", None)
        if built is not None:  # GE allocated the streams at its build: the FX nodes run on them
            from airctl.sim.ge_build import scoped_module

            gm = scoped_module(built, gm)
        fx_outputs = run_fx(gm, fx_args, name)
        n_ge = len(concrete.graph.attr["_output_dtypes"].list.i)
        ge_outputs: list = [None] * n_ge
        for fx_idx, ge_idx in concrete._fx_outputs_mapping.items():
            ge_outputs[ge_idx] = fx_outputs[fx_idx]
        for ge_idx, assigned in enumerate(assigned_outputs or []):
            if assigned is not None and ge_outputs[ge_idx] is not None and assigned is not ge_outputs[ge_idx]:
                assigned.copy_(ge_outputs[ge_idx])
                ge_outputs[ge_idx] = assigned
        return ge_outputs

    return run


def _run_ge_ops(executor: Any, inputs: Sequence[Any], assigned_outputs: Sequence[Any], missing: list[str]) -> list:
    from airctl.execute.ge_program import GeGraphError
    from airctl.sim.ge_graph_runner import run_loaded

    try:
        return run_loaded(executor, inputs, assigned_outputs)
    except RuntimeError as e:
        if not isinstance(e.__cause__, GeGraphError):
            raise
        raise RuntimeError(
            f"sim: torch has no CPU kernel for {', '.join(missing)}, so graph {executor.name or '(unnamed)'} runs "
            f"from its GE ops, and {e.__cause__}. Fix: give the op a CPU kernel (torch.library.impl(..., 'CPU')) "
            "for sim to compute it with") from e.__cause__


_CPU_LESS_ATTR = "_airctl_cpu_less_ops"


def cpu_less_ops(gm: Any) -> list[str]:
    """The ops of ``gm`` that torch has no CPU kernel for (counting composite ones, and the op an
    ``auto_functionalized`` node calls), once per graph; not the stream ops (``air``, ``npugraph_ex``),
    which the multi-stream executor carries out itself."""
    found = gm.__dict__.get(_CPU_LESS_ATTR)
    if found is None:
        import torch

        ops = set()
        for node in gm.graph.nodes:
            if node.op != "call_function":
                continue
            op = node.target
            if isinstance(op, torch._ops.HigherOrderOperator) and node.args:
                op = node.args[0]  # auto_functionalized(_v2)'s mutating op
            if isinstance(op, torch._ops.OpOverload):
                ops.add(op.name())
        found = sorted(name for name in ops if name.partition("::")[0] not in STREAM_NAMESPACES
                       and not torch._C._dispatch_has_computed_kernel_for_dispatch_key(name, "CPU"))
        gm.__dict__[_CPU_LESS_ATTR] = found
    return found

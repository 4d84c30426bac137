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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

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

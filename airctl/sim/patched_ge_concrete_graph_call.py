"""Patch of one TorchAir internal: ``GeConcreteGraph.__call__`` (sim only).

TorchAir's own ``__call__`` still does all of its work — input processing, the
``dynamo_optimized_graph`` dump, ``load``/``compile`` of the GE graph, output mapping — and
calls ``TorchNpuGraph.run`` on our ``_torchair`` stand-in. That stand-in cannot run a GE graph;
what it needs is the FX graph TorchAir converted and the FX-level arguments of this call. This
wrapper makes both available to the runner for the duration of the call, and the runner maps
FX outputs to GE output slots with TorchAir's own ``_fx_outputs_mapping``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

_tls = threading.local()
_patched = False

# fx executor: (graph_module, fx_args, graph_name) -> tuple of outputs
FxExecutor = Callable[[Any, Sequence[Any], str], Sequence[Any]]


def install(execute_fx: FxExecutor) -> None:
    global _patched
    from torchair._ge_concrete_graph.fx2ge_converter import GeConcreteGraph

    from airctl.sim import torchair_core

    if not _patched:
        original = GeConcreteGraph.__call__

        def call_with_fx_args(self, *args: Any, **kwargs: Any) -> Any:
            stack = getattr(_tls, "stack", None)
            if stack is None:
                stack = _tls.stack = []
            stack.append((self, args))
            try:
                return original(self, *args, **kwargs)
            finally:
                stack.pop()

        GeConcreteGraph.__call__ = call_with_fx_args
        _patched = True

    def runner(name: str, inputs: Sequence[Any], assigned_outputs: Sequence[Any]) -> list:
        stack = getattr(_tls, "stack", None)
        if not stack:
            raise RuntimeError(f"sim: GE graph {name} ran outside a TorchAir graph call")
        concrete, fx_args = stack[-1]
        fx_outputs = execute_fx(concrete.fx_graph, fx_args, name)
        n_ge = len(concrete.graph.attr["_output_dtypes"].list.i)
        ge_outputs: list = [None] * n_ge
        for fx_idx, ge_idx in concrete._fx_outputs_mapping.items():
            ge_outputs[ge_idx] = fx_outputs[fx_idx]
        for ge_idx, assigned in enumerate(assigned_outputs or []):
            if assigned is not None and ge_outputs[ge_idx] is not None and assigned is not ge_outputs[ge_idx]:
                assigned.copy_(ge_outputs[ge_idx])
                ge_outputs[ge_idx] = assigned
        return ge_outputs

    torchair_core.STATE.runner = runner

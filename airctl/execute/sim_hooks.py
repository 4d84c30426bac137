"""Temporary adapter: the module-level entry points sim and the pipeline call, over ONE
:class:`~airctl.execute.executors.Executors` (``EXECUTORS``).

Everything the executors share (settings, cache, recorder, worker threads, aclgraph graphs)
lives in that object; this module only keeps the old names working until the run context passes
an ``Executors`` down explicitly (issue #11), and still holds the aclgraph patch of TorchAir
(:func:`install_aclgraph`), which belongs in ``airctl/sim/``:

- **max-autotune**: a GE graph "runs" by executing the FX graph TorchAir converted
  (:func:`airctl.sim.install.set_fx_executor`); :func:`execute_ge` is that executor.
- **reduce-overhead / npugraph_ex**: under sim ``debug.run_eagerly`` is on, so TorchAir's
  ``AclGraph`` calls its generated forward (``fx_run_eagerly``), code generated from the final FX
  graph after TorchAir's aclgraph passes. :func:`install_aclgraph` remembers each
  ``AclConcreteGraph``'s final GraphModule by graph name once it is optimised, and makes
  ``fx_run_eagerly`` run that GraphModule on the executor instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airctl.execute.executors import Executors

EXECUTORS = Executors()  # the one instance until a run context carries it (issue #11)

configure = EXECUTORS.configure
executor_for = EXECUTORS.executor_for


def execute_ge(gm: Any, args: Sequence[Any], name: str) -> tuple[Any, ...]:
    """``set_fx_executor`` executor: the converted FX graph on its streams, GE semantics."""
    return EXECUTORS.run_ge(gm, args, name)


def install_aclgraph(executors: Executors = EXECUTORS) -> None:
    """Run aclgraph forwards (sim, run_eagerly) on ``executors`` with aclgraph's semantics.

    Idempotent: the patched methods are marked, so a second call patches nothing.
    """
    from torchair._acl_concrete_graph.acl_graph import AclGraph
    from torchair._acl_concrete_graph.fx2acl_converter import AclConcreteGraph

    if getattr(AclGraph.fx_run_eagerly, "__airctl_patched__", False):
        return
    original_optimize = AclConcreteGraph.optimize_graph_without_runtime

    def optimize_graph_without_runtime(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original_optimize(self, *args, **kwargs)
        name = getattr(self, "fx_graph_name", None)
        if name and self.fx_graph is not None:
            executors.remember_acl_graph(str(name), self.fx_graph)
        return result

    original_run = AclGraph.fx_run_eagerly

    def fx_run_eagerly(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self, "name", None)
        gm = executors.acl_graph(str(name)) if name else None
        if gm is None:
            return original_run(self, *args, **kwargs)
        return executors.run_acl(gm, args, str(name))

    fx_run_eagerly.__airctl_patched__ = True  # type: ignore[attr-defined]
    AclConcreteGraph.optimize_graph_without_runtime = optimize_graph_without_runtime
    AclGraph.fx_run_eagerly = fx_run_eagerly

"""Patch of two TorchAir internals (sim only): ``AclConcreteGraph.optimize_graph_without_runtime``
and ``AclGraph.fx_run_eagerly``.

Under sim, reduce-overhead and npugraph_ex run with ``debug.run_eagerly`` on (NPU graph capture
and replay are device features), so TorchAir's ``AclGraph`` calls its generated forward
(``fx_run_eagerly``). That forward is code generated from the final FX graph after TorchAir's
aclgraph passes (closure events and records inserted). The first wrapper remembers each
``AclConcreteGraph``'s final GraphModule by graph name once it is optimised; the second runs that
GraphModule with ``run_acl`` (the session's multi-stream executor, aclgraph semantics) instead
of the generated code. A graph it never saw optimised runs TorchAir's own way.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from airctl.hooks.patching import Patches

RunAcl = Callable[[Any, Sequence[Any], str], Any]


def remembering_final_graphs(concrete_graph: type, final_graphs: Any) -> Callable[..., Any]:
    """``concrete_graph.optimize_graph_without_runtime`` (TorchAir's class, or npugraph_ex's copy of it)
    that also keeps the optimised GraphModule in ``final_graphs`` under its graph name."""
    original_optimize = concrete_graph.optimize_graph_without_runtime

    def optimize_graph_without_runtime(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original_optimize(self, *args, **kwargs)
        name = getattr(self, "fx_graph_name", None)
        if name and self.fx_graph is not None:
            final_graphs[str(name)] = self.fx_graph
        return result

    return optimize_graph_without_runtime


def patch(p: Patches, run_acl: RunAcl) -> None:
    from torchair._acl_concrete_graph.acl_graph import AclGraph
    from torchair._acl_concrete_graph.fx2acl_converter import AclConcreteGraph

    final_graphs: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # graph name -> GraphModule
    original_run = AclGraph.fx_run_eagerly
    optimize_graph_without_runtime = remembering_final_graphs(AclConcreteGraph, final_graphs)

    def fx_run_eagerly(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self, "name", None)
        gm = final_graphs.get(str(name)) if name else None
        if gm is None:
            return original_run(self, *args, **kwargs)
        return run_acl(gm, list(args), str(name))

    p.setattr(AclConcreteGraph, "optimize_graph_without_runtime", optimize_graph_without_runtime)
    p.setattr(AclGraph, "fx_run_eagerly", fx_run_eagerly)

"""Patch of three npugraph_ex internals (sim only): ``AclConcreteGraph.optimize_graph_without_runtime``,
``AclGraph.compile`` and ``AclGraph.__call__``.

npugraph_ex has no ``run_eagerly`` switch (its ``force_eager`` skips capture altogether), and NPU
graph capture and replay are device features. Under sim an npugraph_ex graph keeps TorchAir's
capture *bookkeeping* and runs its final FX graph on the session's multi-stream executor
(``run_acl``, aclgraph semantics), as reduce-overhead does (:mod:`.patched_acl_graph`):

- the first wrapper remembers each ``AclConcreteGraph``'s final GraphModule by graph name once it
  is optimised (after npugraph_ex's closure events and records are inserted);
- ``compile`` decides, as npugraph_ex's does, whether a call needs a capture: the graph key comes
  from npugraph_ex's own ``get_unupdated_input_fn`` (the shapes and symbol values that are not
  updated in place), a known key is checked with its own ``is_need_to_recapture`` (mutated inputs
  moved, the stream's core limit changed, ``force_recapture``: its counters count them), and past
  ``capture_limit`` the graph falls back to eager for good, with npugraph_ex's warning (and its
  INFO/DEBUG lines for a replay, a recapture and a capture, as its own ``compile`` logs them). A
  "capture" records the key and what recapture checks compare; nothing is captured;
- ``__call__`` runs that bookkeeping (unless ``force_eager``) and then the final GraphModule.

A graph it never saw optimised runs npugraph_ex's own way, and so does every graph while the script
has put a device of its own in place of the stand-in (``sys.modules['torch_npu']`` is not airctl's:
TorchAir's system tests bring stubs of NPUGraph, streams and events, and check npugraph_ex's own
capture path against them).
"""

from __future__ import annotations

import sys
import warnings
import weakref
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from airctl.hooks.patching import Patches
from airctl.sim.patched_acl_graph import remembering_final_graphs

RunAcl = Callable[[Any, Sequence[Any], str], Any]
FALLBACK = "fallback_to_eager"


def _standin_device() -> bool:
    """Whether the device npugraph_ex sees is airctl's stand-in (not a script's own stub)."""
    return bool(getattr(sys.modules.get("torch_npu"), "__airctl_standin__", False))


def _stream_cores() -> tuple[Any, Any]:
    import torch

    limit = torch.npu.get_stream_limit(torch.npu.current_stream())
    return limit.get("cube_core_num"), limit.get("vector_core_num")


def patch(p: Patches, run_acl: RunAcl) -> None:
    from npugraph_ex._acl_concrete_graph import acl_graph as acl
    from npugraph_ex._acl_concrete_graph.fx2acl_converter import AclConcreteGraph
    from torch._dynamo.utils import counters

    final_graphs: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # graph name -> GraphModule
    original_call = acl.AclGraph.__call__
    original_compile = acl.AclGraph.compile

    optimize_graph_without_runtime = remembering_final_graphs(AclConcreteGraph, final_graphs)

    def compile(self: Any, *args: Any, **kwargs: Any) -> str:
        if not _standin_device():
            return original_compile(self, *args, **kwargs)
        if not self._captured:
            self._unupdated_input_func = acl.get_unupdated_input_fn(
                self._unupdated_sym_input_index, self._parameter_user_inputs, self.config)
            self._captured = True
        if self.fallback_to_eager:
            return FALLBACK
        key = self._unupdated_input_func(*args, **kwargs)
        if key in self._graphs_meta:  # npugraph_ex's own log lines for each decision (airctl why reads them)
            acl.logger.info("Find captured AclGraph{id: %s} of fx_graph %s with graph key {%s}.",
                            id(self._graphs_meta[key]), self.name, key)
            if not self.is_need_to_recapture(key, *args):
                return key
            acl.logger.debug("The current AclGraph needs to be recaptured for fx_graph %s with graph key {%s}.",
                             self.name, key)
        limit = int(self.config.get("capture_limit", "-1"))
        if len(self._graphs_meta) == limit:
            message = (f"The capture_limit reached when capturing fx_graph {self.name} with graph key {key}, "
                       f"we will fall back to eager for all subsequent executions. The current capture_limit is "
                       f"{limit}.")
            warnings.warn(message, stacklevel=2)
            acl.logger.warning(message)
            self._fallback_to_eager = True
            return FALLBACK
        mutated = {idx: args[idx].data_ptr() for name, idx in self._user_inputs_mapping.items()
                   if name in (self._mutated_user_inputs or ())}
        cube, vector = _stream_cores()
        self._graphs_meta[key] = SimpleNamespace(graph_key=key, acl_graph=None, captured_mutated_inputs=mutated,
                                                 captured_cube_core_num=cube, captured_vector_core_num=vector)
        counters["npugraph_ex"]["captured_" + self.name] = len(self._graphs_meta)
        acl.logger.debug("No find captured AclGraph{id: %s} of fx_graph %s with graph key {%s}, and start to "
                         "capture it.", id(self._graphs_meta[key]), self.name, key)
        table = counters["npugraph_ex"]
        acl.logger.debug(
            "For graph %s : the count of captures is %s, and count of recaptures caused by mutated inputs changed is "
            "%s, and count of recaptures caused by global limit changed is %s, and count of recaptures caused by "
            "force_recapture is %s", self.name, table["captured_" + self.name],
            table["recapture_due_to_mutated_input_change_" + self.name],
            table["recapture_due_to_global_limit_core_change_" + self.name],
            table["recapture_due_to_force_recapture_" + self.name])
        return key

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self, "name", None)
        gm = final_graphs.get(str(name)) if name else None
        if gm is None or not _standin_device():
            return original_call(self, *args, **kwargs)
        if not self.config.get("force_eager", False):
            self.compile(*args, **kwargs)
        return run_acl(gm, list(args), str(name))

    p.setattr(AclConcreteGraph, "optimize_graph_without_runtime", optimize_graph_without_runtime)
    p.setattr(acl.AclGraph, "compile", compile)
    p.setattr(acl.AclGraph, "__call__", call)

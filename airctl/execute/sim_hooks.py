"""Where the multi-stream executor runs under sim: GE graphs and aclgraph forwards.

- **max-autotune**: a GE graph "runs" by executing the FX graph TorchAir converted
  (:func:`airctl.sim.install.set_fx_executor`); :func:`execute_ge` is that executor, with GE's
  meaning of the air ops (``wait_tensor`` = Identity, data edges synchronised).
- **reduce-overhead / npugraph_ex**: under sim ``debug.run_eagerly`` is on, so TorchAir's
  ``AclGraph`` calls its generated forward (``fx_run_eagerly``). That forward is code generated
  from the final FX graph after TorchAir's aclgraph passes (closure events and records inserted).
  :func:`install_aclgraph` records each ``AclConcreteGraph``'s final GraphModule by graph name once
  it is optimised, and makes ``fx_run_eagerly`` run that GraphModule on the executor instead.

Executors are cached per GraphModule and mode; :func:`configure` sets the thread count per
stream and the wait timeout for the runs that follow.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from airctl.execute.executor import DEFAULT_TIMEOUT_S, StreamExecutor


@dataclass
class Settings:
    threads_per_stream: int | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    serial: bool = False  # every stream on the calling thread (one-stream baseline; the profiler's view)
    enabled: bool = True


SETTINGS = Settings()
_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_acl_graphs: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_lock = threading.Lock()
_acl_installed = False


@contextlib.contextmanager
def configure(threads_per_stream: int | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
              serial: bool = False) -> Iterator[Settings]:
    old = (SETTINGS.threads_per_stream, SETTINGS.timeout_s, SETTINGS.serial)
    SETTINGS.threads_per_stream, SETTINGS.timeout_s, SETTINGS.serial = threads_per_stream, timeout_s, serial
    try:
        yield SETTINGS
    finally:
        SETTINGS.threads_per_stream, SETTINGS.timeout_s, SETTINGS.serial = old


def executor_for(gm: Any, mode: str, name: str, args: Sequence[Any] = ()) -> StreamExecutor:
    from airctl.execute.cuda import CudaStreamExecutor, wants_cuda

    cls = CudaStreamExecutor if wants_cuda(args) else StreamExecutor
    with _lock:
        per_gm = _cache.get(gm)
        if per_gm is None:
            per_gm = _cache[gm] = {}
        ex = per_gm.get(mode)
    if ex is None or ex.name != name or type(ex) is not cls:
        ex = cls(gm, mode, name, threads_per_stream=SETTINGS.threads_per_stream, timeout_s=SETTINGS.timeout_s)
        with _lock:
            per_gm[mode] = ex
    ex.threads_per_stream = SETTINGS.threads_per_stream
    ex.timeout_s = SETTINGS.timeout_s
    ex.serial = SETTINGS.serial or isinstance(ex, CudaStreamExecutor)
    return ex


def execute_ge(gm: Any, args: Sequence[Any], name: str) -> tuple[Any, ...]:
    """``set_fx_executor`` executor: the converted FX graph on its streams, GE semantics."""
    out = executor_for(gm, "max-autotune", name, args).run(list(args))
    return tuple(out) if isinstance(out, (list, tuple)) else (out,)


def install_aclgraph() -> None:
    """Run aclgraph forwards (sim, run_eagerly) on the executor with aclgraph's semantics."""
    global _acl_installed
    if _acl_installed:
        return
    from torchair._acl_concrete_graph.acl_graph import AclGraph
    from torchair._acl_concrete_graph.fx2acl_converter import AclConcreteGraph

    original_optimize = AclConcreteGraph.optimize_graph_without_runtime

    def optimize_graph_without_runtime(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original_optimize(self, *args, **kwargs)
        name = getattr(self, "fx_graph_name", None)
        if name and self.fx_graph is not None:
            _acl_graphs[str(name)] = self.fx_graph
        return result

    original_run = AclGraph.fx_run_eagerly

    def fx_run_eagerly(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self, "name", None)
        gm = _acl_graphs.get(str(name)) if name and SETTINGS.enabled else None
        if gm is None:
            return original_run(self, *args, **kwargs)
        return executor_for(gm, "reduce-overhead", str(name), args).run(list(args))

    AclConcreteGraph.optimize_graph_without_runtime = optimize_graph_without_runtime
    AclGraph.fx_run_eagerly = fx_run_eagerly
    _acl_installed = True

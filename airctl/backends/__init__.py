"""Backends behind one interface (:mod:`.interface`): ``npu`` (real torch_npu + CANN, :mod:`.npu`)
and ``sim`` (CPU stand-ins, :mod:`.sim`), chosen once per run by :func:`choose`.

>>> backend = choose("auto")        # doctest: +SKIP
>>> backend.name, backend.reason    # doctest: +SKIP
('sim', 'no CANN toolkit: libhccl.so, ... not loadable ...')
"""

from __future__ import annotations

from airctl.backends.interface import Backend
from airctl.backends.npu import NpuBackend
from airctl.backends.sim import SimBackend
from airctl.errors import BackendError
from airctl.modes import Backend as BackendName
from airctl.sim.registry import REGISTRY
from airctl.torch_env import cann_status, torch_npu_installed

BACKENDS = tuple(b.value for b in BackendName)

__all__ = ["BACKENDS", "Backend", "NpuBackend", "SimBackend", "choose", "warm"]

# what choose() answered in this process before warm() loaded the backend: a process forked from
# it afterwards (a rank, airctl.pipeline.ranks.forks) chooses as a fresh process would have
_CHOSEN_COLD: dict[str, Backend] = {}


def choose(requested: str = "auto") -> Backend:
    if requested not in BACKENDS:
        raise BackendError(f"unknown backend {requested!r}", hint="choose one of: " + ", ".join(BACKENDS))
    if requested in _CHOSEN_COLD:
        cold = _CHOSEN_COLD[requested]
        return type(cold)(cold.reason)  # one instance per run
    if REGISTRY.torchair is not None:  # TorchAir was imported against the stand-ins: sim for good
        if requested == "npu":
            raise BackendError("the sim backend was used in this process already; npu cannot be used too",
                               hint="run airctl again in a new process for --backend npu")
        return SimBackend("sim stand-ins already loaded in this process")
    if not torch_npu_installed():
        if requested == "npu":
            raise BackendError("backend npu needs the torch-npu wheel", hint="pip install torch-npu==2.13.0")
        raise BackendError("TorchAir is not available: the torch-npu wheel is not installed",
                           hint="pip install torch==2.13.0 torch-npu==2.13.0 (the sim backend runs TorchAir from it)")
    status = cann_status()
    if requested == "sim":
        return SimBackend("requested with --backend sim")
    if requested == "npu":
        if not status.available:
            raise BackendError(f"backend npu needs CANN: {status.reason}",
                               hint="source /usr/local/Ascend/ascend-toolkit/set_env.sh, or use --backend sim")
        return NpuBackend(status.reason)
    if status.available:
        return NpuBackend(status.reason)
    return SimBackend(status.reason)


def warm(requested: str = "auto") -> Backend | None:
    """Choose the backend, import what its runs import (:meth:`Backend.warm`) and remember the
    choice, so that processes forked from this one choose it for the same reason; None where the
    backend's processes must start fresh (``npu``). Raises :class:`BackendError` as :func:`choose`."""
    backend = choose(requested)
    if not backend.forkable:
        return None
    # a rank asks for what it was given, then for the backend by name (the compile it starts)
    cold = {requested: backend, backend.name: choose(backend.name)}
    backend.warm()
    _CHOSEN_COLD.update(cold)
    return backend

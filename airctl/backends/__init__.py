"""Backends behind one interface: ``npu`` (real torch_npu + CANN) and ``sim`` (CPU stand-ins).

>>> choice = choose("auto")        # doctest: +SKIP
>>> choice.name, choice.reason     # doctest: +SKIP
('sim', 'no CANN toolkit: libhccl.so, ... not loadable ...')
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from airctl.errors import BackendError
from airctl.modes import Backend
from airctl.sim.registry import REGISTRY
from airctl.torch_env import cann_status, ensure_torch_importable, torch_npu_installed

BACKENDS = tuple(b.value for b in Backend)


@dataclass(frozen=True)
class BackendChoice:
    name: str  # "npu" or "sim"
    reason: str

    @contextmanager
    def session(self, sim: Any) -> Iterator[Any]:
        """``import torch_npu`` / ``import torchair`` work for this backend while the block runs;
        yields ``torchair``. ``sim`` (an :class:`airctl.sim.session.SimContext`) says how graphs
        execute under sim; on an NPU the device runs them."""
        if self.name == "sim":
            from airctl.sim.session import session

            with session(sim) as torchair:
                yield torchair
            return
        ensure_torch_importable()
        from airctl.sim import patched_signal_handlers

        try:
            with patched_signal_handlers.kept():  # TorchAir's own would swallow Ctrl-C (see the module)
                import torch_npu  # noqa: F401
                import torchair
        except Exception as e:  # ImportError from missing CANN libs, RuntimeError from autoload
            raise BackendError(f"backend npu: cannot import torch_npu/torchair: {e}",
                               hint="source CANN's set_env.sh, or use --backend sim") from e
        yield torchair

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "reason": self.reason}


def choose(requested: str = "auto") -> BackendChoice:
    if requested not in BACKENDS:
        raise BackendError(f"unknown backend {requested!r}", hint="choose one of: " + ", ".join(BACKENDS))
    if REGISTRY.torchair is not None:  # TorchAir was imported against the stand-ins: sim for good
        if requested == "npu":
            raise BackendError("the sim backend was used in this process already; npu cannot be used too",
                               hint="run airctl again in a new process for --backend npu")
        return BackendChoice("sim", "sim stand-ins already loaded in this process")
    if not torch_npu_installed():
        if requested == "npu":
            raise BackendError("backend npu needs the torch-npu wheel", hint="pip install torch-npu==2.13.0")
        raise BackendError("TorchAir is not available: the torch-npu wheel is not installed",
                           hint="pip install torch==2.13.0 torch-npu==2.13.0 (the sim backend runs TorchAir from it)")
    status = cann_status()
    if requested == "sim":
        return BackendChoice("sim", "requested with --backend sim")
    if requested == "npu":
        if not status.available:
            raise BackendError(f"backend npu needs CANN: {status.reason}",
                               hint="source /usr/local/Ascend/ascend-toolkit/set_env.sh, or use --backend sim")
        return BackendChoice("npu", status.reason)
    if status.available:
        return BackendChoice("npu", status.reason)
    return BackendChoice("sim", status.reason)

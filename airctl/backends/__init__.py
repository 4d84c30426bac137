"""Backends behind one interface: ``npu`` (real torch_npu + CANN) and ``sim`` (CPU stand-ins).

>>> choice = choose("auto")        # doctest: +SKIP
>>> choice.name, choice.reason     # doctest: +SKIP
('sim', 'no CANN toolkit: libhccl.so, ... not loadable ...')
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from airctl.errors import BackendError
from airctl.torch_env import cann_status, ensure_torch_importable, torch_npu_installed

BACKENDS = ("auto", "npu", "sim")


@dataclass(frozen=True)
class BackendChoice:
    name: str  # "npu" or "sim"
    reason: str

    def prepare(self) -> Any:
        """Make ``import torch_npu`` / ``import torchair`` work for this backend; return torchair."""
        if self.name == "sim":
            from airctl.sim.install import activate

            return activate()
        ensure_torch_importable()
        try:
            import torch_npu  # noqa: F401
            import torchair
        except Exception as e:  # ImportError from missing CANN libs, RuntimeError from autoload
            raise BackendError(f"backend npu: cannot import torch_npu/torchair: {e}",
                               hint="source CANN's set_env.sh, or use --backend sim") from e
        return torchair

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "reason": self.reason}


def choose(requested: str = "auto") -> BackendChoice:
    if requested not in BACKENDS:
        raise BackendError(f"unknown backend {requested!r}", hint="choose one of: " + ", ".join(BACKENDS))
    if "airctl.sim.install" in sys.modules and sys.modules["airctl.sim.install"].is_active():
        if requested == "npu":
            raise BackendError("the sim backend is already active in this process; npu cannot be used too")
        return BackendChoice("sim", "sim stand-ins already active in this process")
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

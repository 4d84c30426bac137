"""Stand-in for the parts of ``torch_npu`` that TorchAir and user scripts touch.

The real ``torch_npu`` needs CANN to import. Under ``sim`` this package is registered as
``torch_npu`` (and its device module as ``torch.npu``) by :func:`airctl.sim.install.activate`:
the device word ``npu`` maps to the CPU, streams and events are objects the executor and the
profiler observe, and ``torch_npu.profiler`` records with ``torch.profiler`` and writes the
Ascend output layout. It never pretends to compute anything the CPU did not compute.
"""

from __future__ import annotations

import torch as _torch

from airctl.sim.torch_npu import npu, profiler  # noqa: F401  (submodules users reach as attributes)

__version__ = "2.13.0+airctl.sim"
__airctl_standin__ = True

# dtype aliases TorchAir's converters reference as torch_npu.<name>; plain torch dtypes where
# torch has them, otherwise placeholders that only compare by identity.
float8_e5m2 = getattr(_torch, "float8_e5m2", None)
float8_e4m3fn = getattr(_torch, "float8_e4m3fn", None)
float8_e8m0fnu = getattr(_torch, "float8_e8m0fnu", None)
float4_e2m1fn_x2 = getattr(_torch, "float4_e2m1fn_x2", None)
bfloat16 = _torch.bfloat16
int32 = _torch.int32


def _autoload() -> None:
    """Entry point torch calls for device-backend autoload; the stand-in needs nothing."""


def __getattr__(name: str):
    """Every ``torch.ops.npu`` op of the installed wheel, as ``torch_npu.<op>`` (:mod:`airctl.sim.wheel_ops`)."""
    if name.startswith("__"):
        raise AttributeError(name)
    from airctl.sim import wheel_ops

    return wheel_ops.top_level(name)


def __dir__() -> list[str]:
    from airctl.sim import wheel_ops

    return sorted(set(globals()) | set(wheel_ops.top_level_names()))

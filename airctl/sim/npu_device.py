"""The device word ``npu`` under sim: ``.npu()``, ``.to("npu")``, ``device="npu"``.

Moving a tensor or module to ``npu`` keeps it on the CPU, where the sim backend computes;
factory calls with ``device="npu"`` are mapped the same way, and ``Tensor.is_npu`` exists (False:
the data really is on the CPU). ``torch.device("npu")`` itself is not supported: it would need
torch's PrivateUse1 backend renamed, which makes torch believe an accelerator is present.
"""

from __future__ import annotations

import functools
from typing import Any

_installed = False


def _is_npu(dev: Any) -> bool:
    import torch

    if isinstance(dev, str):
        return dev == "npu" or dev.startswith("npu:")
    if isinstance(dev, torch.device):
        return dev.type == "npu"
    return False


def map_device(dev: Any) -> Any:
    """``npu``/``npu:N``/``torch.device('npu')`` -> ``cpu``; anything else unchanged."""
    return "cpu" if _is_npu(dev) else dev


def _map_call(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    args = tuple(map_device(a) for a in args)
    if "device" in kwargs:
        kwargs = dict(kwargs, device=map_device(kwargs["device"]))
    return args, kwargs


_FACTORIES = (
    "empty zeros ones full rand randn randint arange linspace tensor as_tensor eye "
    "zeros_like ones_like empty_like full_like rand_like randn_like"
).split()


def install() -> None:
    """Idempotent: rename PrivateUse1 to npu and map the device word to the CPU."""
    global _installed
    if _installed:
        return
    import torch

    # PrivateUse1 is *not* renamed: torch.accelerator would then report an "npu" accelerator
    # that torch cannot drive, and Dynamo queries it on every frame.
    if not hasattr(torch.Tensor, "is_npu"):
        torch.Tensor.is_npu = property(lambda self: self.device.type == "npu")

    def tensor_npu(self, device=None, non_blocking=False, **kwargs):
        return self

    def module_npu(self, device=None):
        return self

    torch.Tensor.npu = tensor_npu
    torch.nn.Module.npu = module_npu

    orig_tensor_to = torch.Tensor.to
    orig_module_to = torch.nn.Module.to

    @functools.wraps(orig_tensor_to)
    def tensor_to(self, *args, **kwargs):
        args, kwargs = _map_call(args, kwargs)
        return orig_tensor_to(self, *args, **kwargs)

    @functools.wraps(orig_module_to)
    def module_to(self, *args, **kwargs):
        args, kwargs = _map_call(args, kwargs)
        return orig_module_to(self, *args, **kwargs)

    torch.Tensor.to = tensor_to
    torch.nn.Module.to = module_to

    for name in _FACTORIES:
        orig = getattr(torch, name, None)
        if orig is None:
            continue

        def make(fn):
            @functools.wraps(fn)
            def factory(*args, **kwargs):
                if "device" in kwargs and _is_npu(kwargs["device"]):
                    kwargs = dict(kwargs, device="cpu")
                return fn(*args, **kwargs)

            return factory

        setattr(torch, name, make(orig))
    _installed = True

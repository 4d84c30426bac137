"""Patch of ``sys.modules['torch_npu']`` and ``torch.npu`` under sim: the stand-in device.

The real ``torch_npu`` needs CANN to import. For the length of a sim session ``import torch_npu``
gives :mod:`airctl.sim.torch_npu` (and its ``npu``, ``npu.utils``, ``npu.streams`` and
``profiler`` submodules), and ``torch.npu`` is its device module, as ``torch_npu`` makes it with
``torch._register_device_module`` (that call needs ``npu`` to be a device type torch knows, so
the attribute and ``sys.modules['torch.npu']`` are set directly). The stand-in also remembers
where the real wheel lives, so TorchAir can still be found inside it.
"""

from __future__ import annotations

from airctl.hooks.patching import Patches


def patch(p: Patches) -> None:
    import torch

    from airctl.sim import torch_npu as standin
    from airctl.sim.torch_npu import npu as npu_mod
    from airctl.sim.torch_npu import profiler as prof_mod
    from airctl.sim.torchair_loader import torch_npu_root

    torch_npu_root()  # found (and remembered) before the stand-in hides the wheel
    p.module("torch_npu", standin)
    p.module("torch_npu.npu", npu_mod)
    p.module("torch_npu.npu.utils", npu_mod.utils)  # type: ignore[arg-type]
    p.module("torch_npu.npu.streams", npu_mod.streams)  # type: ignore[arg-type]
    p.module("torch_npu.profiler", prof_mod)
    p.setattr(torch, "npu", npu_mod)
    p.module("torch.npu", npu_mod)

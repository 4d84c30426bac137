"""Patch of ``torch.accelerator.is_available`` under sim: no C++ device behind the name ``npu``.

torch 2.13's Dynamo asks ``torch.accelerator.is_available()`` when it starts tracing a frame and,
when it says yes, the accelerator's current stream from torch's C++ side. Under sim no C++ backend
stands behind ``npu`` (the stand-in device is Python: :mod:`airctl.sim.torch_npu`), so a sim run
answers as torch does with no accelerator: Dynamo then tracks no device stream. Without this, a
script that renames the PrivateUse1 backend to ``npu`` itself — TorchAir's system tests do, then
put a ``StubNpu`` of their own at ``torch.npu`` — stopped in Dynamo before TorchAir saw a graph
(``'StubNpu' object has no attribute 'is_available'``, then ``PyTorch is not linked with support
for npu devices``). Any other accelerator gets torch's own answer.
"""

from __future__ import annotations

from airctl.sim.patching import Patches


def patch(p: Patches) -> None:
    import torch.accelerator as accelerator

    original = accelerator.is_available

    def is_available() -> bool:
        acc = accelerator.current_accelerator()
        if acc is not None and acc.type == "npu":
            return False
        return original()

    p.setattr(accelerator, "is_available", is_available)

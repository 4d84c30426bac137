"""Patch of ``torch.accelerator.is_available`` under sim: Dynamo tracks no device stream of ``npu``.

torch 2.13's Dynamo asks ``torch.accelerator.is_available()`` when it starts tracing a frame and,
when it says yes, registers the accelerator's current stream (a ``torch.Stream`` from torch's C++
device guard) as the frame's stream 0, guarded on. Under sim the ``npu`` device behind
PrivateUse1 is registered from Python (:mod:`airctl.sim.npu_device`: hooks, a guard, stream 0), so
``torch.accelerator`` answers once a script renames PrivateUse1 to ``npu`` — TorchAir's own system
tests do, then put a module of their own (or a ``StubNpu``) at ``torch.npu``. But the streams sim
executes and observes are the stand-in ``torch_npu``'s (:mod:`airctl.sim.torch_npu`), not the
guard's: a stream Dynamo tracked would be one the executor never sees, and a ``StubNpu`` without
``is_available`` would stop Dynamo (``'StubNpu' object has no attribute 'is_available'``). So a sim
run answers as torch does with no accelerator, and Dynamo tracks no device stream, as for every
other sim run. ``torch.accelerator.current_accelerator()``, ``current_stream()``, ``device_count()``
keep torch's own answers; any other accelerator gets torch's own ``is_available``.
"""

from __future__ import annotations

from airctl.hooks.patching import Patches


def patch(p: Patches) -> None:
    import torch.accelerator as accelerator

    original = accelerator.is_available

    def is_available() -> bool:
        acc = accelerator.current_accelerator()
        if acc is not None and acc.type == "npu":
            return False
        return original()

    p.setattr(accelerator, "is_available", is_available)

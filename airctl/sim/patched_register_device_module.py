"""Patch of ``torch._register_device_module`` under sim: registering ``npu`` again keeps the stand-in.

A sim session makes the stand-in device module ``torch.npu`` (:mod:`.patched_torch_npu`). Scripts
written for machines without torch_npu register a module of their own under that name first —
TorchAir's own system tests do (``torch._register_device_module('npu', generate_faked_module())``,
a module with only ``is_available``) — and torch refuses a second registration with a
RuntimeError, so such a script stopped at its first lines. For the length of a session that call
keeps the stand-in (which has everything such a module offers) and logs it; any other device
type is registered by torch as before.
"""

from __future__ import annotations

import logging
from typing import Any

from airctl.hooks.patching import Patches

log = logging.getLogger("airctl.sim")


def patch(p: Patches) -> None:
    import torch

    original = torch._register_device_module

    def register_device_module(device_type: Any, module: Any) -> None:
        standin = getattr(torch, "npu", None)
        if str(device_type) == "npu" and getattr(standin, "__name__", "").startswith("airctl.sim"):
            log.info("sim: torch._register_device_module('npu', %s) keeps the stand-in torch.npu",
                     getattr(module, "__name__", module))
            return None
        return original(device_type, module)

    p.setattr(torch, "_register_device_module", register_device_module)

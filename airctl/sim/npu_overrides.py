"""torch_npu's kernels for torch composite ops, on the CPU keys: what makes sim's graphs the NPU's.

torch_npu registers its own kernels for some CompositeImplicitAutograd ops at the NPU and
AutogradNPU keys, so on an NPU the AOT graph holds what those kernels call, not torch's
decomposition. Sim's tensors are CPU tensors; registering the same logic at CPU and AutogradCPU
gives sim the NPU's graph. Each kernel is active only inside a sim session (the stand-in device
has a SoC then); outside one it runs torch's own composite, so the rest of the process is
unchanged. Which ops, and why these (docs/sim.md, "Ops whose graph differs on an NPU"):

- ``scaled_dot_product_attention``: :mod:`airctl.sim.npu_sdpa` (fused attention or the math path);
- ``one_hot``: op-plugin's kernel traces ``arange``, ``unsqueeze``, ``eq`` and a cast to int64,
  which TorchAir converts; torch's CPU decomposition adds range checks (``_assert_async``) that
  TorchAir cannot convert, so ``F.one_hot`` failed under sim while it compiles on an NPU. As on
  the NPU's traced path, values outside ``[0, num_classes)`` are not checked (they give rows of
  zeros).

The libraries are kept in :data:`~airctl.sim.registry.REGISTRY` (torch drops a library's kernels
when it is garbage-collected).
"""

from __future__ import annotations

from typing import Any

import torch

from airctl.sim import npu_sdpa
from airctl.sim.registry import REGISTRY


def npu_one_hot(self: Any, num_classes: int = -1) -> Any:
    """torch_npu's ``one_hot``: ``eq(self.unsqueeze(-1), arange(num_classes)).to(int64)``."""
    if REGISTRY.device.soc is None:
        return torch.ops.aten.one_hot.default.decompose(self, num_classes)
    if num_classes == -1:
        num_classes = int(self.max().item()) + 1 if self.numel() else 0
    index = torch.arange(num_classes, device=self.device, dtype=self.dtype)
    return torch.eq(self.unsqueeze(-1), index).to(torch.long)


def register() -> None:
    """Register the kernels once per process (kept in the registry)."""
    if REGISTRY.overrides_registered:
        return
    lib = torch.library.Library("aten", "IMPL")
    npu_sdpa.register(lib)
    for key in ("CPU", "AutogradCPU"):
        lib.impl("one_hot", npu_one_hot, key)
    REGISTRY.op_libraries.append(lib)
    REGISTRY.overrides_registered = True

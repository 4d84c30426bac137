"""What ``F.scaled_dot_product_attention`` does on an NPU, done on the CPU keys (docs/sim.md, "SDPA").

torch's SDPA is a CompositeImplicitAutograd op; on CPU tensors it picks
``_scaled_dot_product_flash_attention_for_cpu``, which TorchAir cannot convert. torch_npu registers
its own kernel for ``aten::scaled_dot_product_attention`` at the NPU *and* AutogradNPU keys
(op-plugin ``ScaledDotProductAttentionKernelNpuOpApi.cpp``), so on an NPU the AOT graph holds
what that kernel calls. :func:`npu_sdpa` follows its branches, registered at the CPU and
AutogradCPU keys (the autograd key is what makes AOT record the kernel's calls):

1. fp32 with a head dim not divisible by 4 -> the math path;
2. the fused path when the SoC is Atlas A2 or newer, the dtype fp16/bf16/fp32, the mask boolean
   or absent, q/k/v 4-D, N1 <= 2048, N2 <= 2048, D <= 512 and N1 % N2 == 0: a causal call passes
   ``triu(ones(2048, 2048, bool), 1)`` with ``sparse_mode=2``, a boolean mask is inverted
   (``logical_not``: on the NPU True masks out), layout ``BNSD``, ``scale`` 1/sqrt(D) unless given,
   ``keep_prob = 1 - dropout_p``; the op is ``npu_fusion_attention_v3`` below Ascend950 and
   ``npu_fusion_attention`` from Ascend950 on;
3. otherwise (float mask, 3-D inputs, pre-A2 SoCs) ->
   ``aten._scaled_dot_product_attention_math`` (a boolean mask made additive first).

Which SoC: the sim session's (``SimContext.soc``, else ``AIRCTL_SIM_SOC``, else
:data:`DEFAULT_SOC`), kept on the stand-in device while the session lasts. Outside a sim session
the kernel is torch's own (``decompose()`` runs the CIA), so nothing else in the process changes.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from airctl.sim.registry import REGISTRY

SOC_ENV = "AIRCTL_SIM_SOC"
DEFAULT_SOC = "Ascend950"  # npu_fusion_attention: converted by TorchAir (A2/A3's v3 has no converter)
TOKEN_MAX = 2147483647

# SoC family -> what the fused branch calls ("math": the family is below Atlas A2)
SOCS = {"Ascend910A": "math", "Ascend310P": "math", "Ascend910B": "v3", "Ascend910_93": "v3", "Ascend950": "fa"}


def soc_path(soc: str) -> str:
    """``fa``, ``v3`` or ``math`` for a SoC name (``Ascend910B2`` is of family ``Ascend910B``)."""
    for family, path in sorted(SOCS.items(), key=lambda kv: -len(kv[0])):
        if soc.lower().startswith(family.lower()):
            return path
    raise ValueError(f"unknown SoC {soc!r}: sim knows {', '.join(SOCS)} (set {SOC_ENV} to one of them)")


def fused_ok(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask: torch.Tensor | None) -> bool:
    """op-plugin's conditions for the FlashAttentionScore branch (the SoC aside)."""
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        return False
    n1, n2, d = query.shape[1], key.shape[1], query.shape[3]
    return (query.dtype in (torch.float16, torch.bfloat16, torch.float32)
            and (attn_mask is None or attn_mask.dtype == torch.bool)
            and n1 <= 2048 and n2 <= 2048 and d <= 512 and n2 > 0 and n1 % n2 == 0)


def _math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        attn_mask = torch.zeros_like(attn_mask, dtype=query.dtype).masked_fill(attn_mask.logical_not(), float("-inf"))
    return torch.ops.aten._scaled_dot_product_attention_math(query, key, value, attn_mask, dropout_p, is_causal,
                                                             None, scale=scale, enable_gqa=enable_gqa)[0]


def npu_sdpa(query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0,
             is_causal: bool = False, *, scale: float | None = None, enable_gqa: bool = False) -> Any:
    """torch_npu's ``scaled_dot_product_attention`` kernel, branch for branch (module docstring)."""
    soc = REGISTRY.device.soc
    if soc is None:  # not in a sim session: torch's own CompositeImplicitAutograd kernel
        return torch.ops.aten.scaled_dot_product_attention.default.decompose(
            query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa)
    path = soc_path(soc)
    fp32_odd = query.dtype == torch.float32 and any(t.shape[-1] % 4 for t in (query, key, value))
    if path == "math" or fp32_odd or not fused_ok(query, key, value, attn_mask):
        return _math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if is_causal:
        mask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=query.device), 1)
    else:
        mask = None if attn_mask is None else torch.logical_not(attn_mask)
    args = (query, key, value, query.shape[1], "BNSD", None, None, mask,
            scale if scale is not None else 1.0 / math.sqrt(query.shape[-1]), 1.0 - dropout_p,
            TOKEN_MAX, 0 if is_causal else TOKEN_MAX,
            2 if (attn_mask is not None and not is_causal and query.shape[2] > 1) else 0,  # inner_precise
            None, None, None, 2 if is_causal else 0)
    op = torch.ops.npu.npu_fusion_attention if path == "fa" else torch.ops.npu.npu_fusion_attention_v3
    return op(*args)[0]


def register(lib: Any) -> None:
    """Register :func:`npu_sdpa` for ``aten::scaled_dot_product_attention`` at CPU and AutogradCPU
    in ``lib`` (a ``torch.library.Library("aten", "IMPL")``)."""
    for key in ("CPU", "AutogradCPU"):
        lib.impl("scaled_dot_product_attention", npu_sdpa, key)

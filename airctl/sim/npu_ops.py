"""``torch.ops.npu.*`` ops that TorchAir's pattern passes trace, with torch_npu's schemas.

TorchAir registers fusion patterns (AddRmsNorm + quant/cast, BatchMatMul + transpose) whenever
``torch_npu`` is in ``sys.modules``; registering a pattern traces it, so the ops must exist
with Meta kernels. Where the math is plain, the CPU kernel computes it (the same function runs
on Meta tensors for shapes). Quantisation kernels have NPU-specific rounding and scale rules
that we do not reproduce: their CPU kernels raise rather than return numbers we cannot vouch
for. Schemas are torch_npu's (its ``npu_native_functions*.yaml``).
"""

from __future__ import annotations

import torch

from airctl.sim import npu_attention
from airctl.sim.registry import REGISTRY

SCHEMAS = {
    "npu_add_rms_norm": "npu_add_rms_norm(Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-06) "
    "-> (Tensor, Tensor, Tensor)",
    "npu_rms_norm": "npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)",
    "npu_add_rms_norm_cast": "npu_add_rms_norm_cast(Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-06) "
    "-> (Tensor, Tensor, Tensor, Tensor)",
    "npu_dynamic_quant": "npu_dynamic_quant(Tensor input, *, Tensor? smooth_scales=None, Tensor? group_index=None, "
    'int? dst_type=None, str quant_mode="pertoken", float dst_type_max=0.0) -> (Tensor, Tensor)',
    "npu_add_rms_norm_dynamic_quant": "npu_add_rms_norm_dynamic_quant(Tensor x1, Tensor x2, Tensor gamma, *, "
    "Tensor? smooth_scale1=None, Tensor? smooth_scale2=None, Tensor? beta=None, float epsilon=1e-6, "
    "bool[2]? output_mask=None, int? y_dtype=None) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
    "npu_add_rms_norm_quant": "npu_add_rms_norm_quant(Tensor x1, Tensor x2, Tensor gamma, Tensor scales1, "
    "Tensor? zero_points1, Tensor? beta=None, Tensor? scales2=None, Tensor? zero_points2=None, *, int axis=-1, "
    "float epsilon=1e-06, bool div_mode=True, int? dst_type=None) -> (Tensor, Tensor, Tensor)",
    "npu_quantize": "npu_quantize(Tensor input, Tensor scales, Tensor? zero_points, int dtype, int axis=1, "
    "bool div_mode=True) -> Tensor",
    "npu_transpose_batchmatmul": "npu_transpose_batchmatmul(Tensor input, Tensor weight, *, Tensor? bias=None, "
    "Tensor? scale=None, int[]? perm_x1=None, int[]? perm_x2=None, int[]? perm_y=None, "
    "int? batch_split_factor=1) -> Tensor",
    "_npu_dtype_cast": "_npu_dtype_cast(Tensor self, ScalarType dtype) -> Tensor",
}


def _rms(x: torch.Tensor, gamma: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(dim=dims, keepdim=True) + eps)
    return (xf * rstd * gamma.float()).to(x.dtype), rstd


def add_rms_norm(x1, x2, gamma, epsilon=1e-6):
    x = x1 + x2
    y, rstd = _rms(x, gamma, epsilon)
    return y, rstd, x


def rms_norm(x, gamma, epsilon=1e-6):
    return _rms(x, gamma, epsilon)


def add_rms_norm_cast(x1, x2, gamma, epsilon=1e-6):
    y, rstd, x = add_rms_norm(x1, x2, gamma, epsilon)
    return y.float(), y, rstd, x


def transpose_batchmatmul(input, weight, *, bias=None, scale=None, perm_x1=None, perm_x2=None, perm_y=None,
                          batch_split_factor=1):
    a = input.permute(*perm_x1) if perm_x1 else input
    b = weight.permute(*perm_x2) if perm_x2 else weight
    y = torch.matmul(a, b)
    if bias is not None:
        y = y + bias
    return y.permute(*perm_y).contiguous() if perm_y else y


def dtype_cast(x, dtype):
    return x.to(dtype)


def _meta_dynamic_quant(input, *, smooth_scales=None, group_index=None, dst_type=None, quant_mode="pertoken",
                        dst_type_max=0.0):
    return (torch.empty_like(input, dtype=torch.int8),
            input.new_empty(input.shape[:-1], dtype=torch.float32))


def _meta_add_rms_norm_dynamic_quant(x1, x2, gamma, *, smooth_scale1=None, smooth_scale2=None, beta=None,
                                     epsilon=1e-6, output_mask=None, y_dtype=None):
    scale_shape = x1.shape[:-1]
    return (torch.empty_like(x1, dtype=torch.int8), torch.empty_like(x1, dtype=torch.int8), torch.empty_like(x1),
            x1.new_empty(scale_shape, dtype=torch.float32), x1.new_empty(scale_shape, dtype=torch.float32))


def _meta_add_rms_norm_quant(x1, x2, gamma, scales1, zero_points1, beta=None, scales2=None, zero_points2=None, *,
                             axis=-1, epsilon=1e-6, div_mode=True, dst_type=None):
    return torch.empty_like(x1, dtype=torch.int8), torch.empty_like(x1, dtype=torch.int8), torch.empty_like(x1)


def _meta_quantize(input, scales, zero_points, dtype, axis=1, div_mode=True):
    return torch.empty_like(input, dtype=torch.int8)


def _no_cpu(name: str):
    def kernel(*args, **kwargs):
        raise NotImplementedError(
            f"sim: torch.ops.npu.{name} quantises with NPU-specific rounding that airctl does not reproduce on CPU; "
            "run this model on an NPU (--backend npu) or keep the op out of the graph"
        )

    return kernel


def register() -> None:
    """Define the ops once per process (skipped for any op that already exists, e.g. real torch_npu),
    with the fused attention ops of :mod:`airctl.sim.npu_attention`.

    The library object lives in :data:`~airctl.sim.registry.REGISTRY`: torch drops the ops when it
    is garbage-collected, and TorchAir's pattern passes keep referring to them.
    """
    missing = [name for name in SCHEMAS if not hasattr(torch.ops.npu, name)]
    if not missing and all(hasattr(torch.ops.npu, name) for name in npu_attention.SCHEMAS):
        return
    lib = torch.library.Library("npu", "FRAGMENT")
    REGISTRY.op_libraries.append(lib)
    npu_attention.register(lib)
    computed = {
        "npu_add_rms_norm": add_rms_norm,
        "npu_rms_norm": rms_norm,
        "npu_add_rms_norm_cast": add_rms_norm_cast,
        "npu_transpose_batchmatmul": transpose_batchmatmul,
        "_npu_dtype_cast": dtype_cast,
    }
    meta_only = {
        "npu_dynamic_quant": _meta_dynamic_quant,
        "npu_add_rms_norm_dynamic_quant": _meta_add_rms_norm_dynamic_quant,
        "npu_add_rms_norm_quant": _meta_add_rms_norm_quant,
        "npu_quantize": _meta_quantize,
    }
    for name in missing:
        lib.define(SCHEMAS[name])
        if name in computed:
            lib.impl(name, computed[name], "CPU")
            lib.impl(name, computed[name], "Meta")
        else:
            lib.impl(name, meta_only[name], "Meta")
            lib.impl(name, _no_cpu(name), "CPU")

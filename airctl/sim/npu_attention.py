"""torch_npu's fused attention ops on the CPU: ``npu_fusion_attention`` (+ ``_v3``, + their grads).

On an NPU these are FlashAttentionScore kernels. torch_npu's ``scaled_dot_product_attention``
kernel calls them (:mod:`airctl.sim.npu_sdpa`), and models call them directly
(``torch_npu.npu_fusion_attention``). Here they are defined with torch_npu's schemas (its
``npu_native_functions_by_codegen.yaml``), Meta kernels with its output shapes
(``op_plugin/meta``: the attention output in the input layout, ``softmax_max``/``softmax_sum`` as
``[B, N, S1, 8]`` fp32, an empty ``softmax_out``), autograd that calls the ``_grad`` op (as
op-plugin's ``derivatives.yaml`` does, so training graphs hold the grad op), and CPU kernels that
compute FlashAttentionScore's semantics:

- ``atten_mask`` is boolean and ``True`` marks a position *masked out* (torch's boolean SDPA mask
  is the opposite); ``sparse_mode`` 0 applies it with the ``pre_tockens``/``next_tockens`` band,
  1 applies it in full, 2 is causal from the top left and 3 from the bottom right (for 2 and 3 the
  mask is NPU's compressed 2048x2048 one and only its meaning is used);
- layouts BNSD, BSND, BSH and SBH; key/value may have fewer heads than the query (grouped-query);
- scores, softmax and the weighted sum run in fp32 and the result is cast back; a row with every
  position masked gives zeros (as torch's ``_safe_softmax``).

Not simulated, with an error saying so: dropout (``keep_prob < 1``: NPU's random mask cannot be
reproduced), ``pse``, ``padding_mask``, ``prefix``, variable-length sequences (TND). The numerics
are tested against torch's own CPU SDPA (tests/sim/test_npu_attention.py); the compiled-vs-eager
check of a run cannot catch an error here, since airctl's eager reference runs these kernels too.
"""

from __future__ import annotations

from typing import Any

import torch

TOKEN_MAX = 2147483647
LAYOUTS = ("BNSD", "BSND", "BSH", "SBH")

_COMMON = ("Tensor query, Tensor key, Tensor value, int head_num, str input_layout, Tensor? pse=None, "
           "Tensor? padding_mask=None, Tensor? atten_mask=None, float scale=1., float keep_prob=1., "
           "int pre_tockens=2147483647, int next_tockens=2147483647, int inner_precise=0, ")
_GRAD_COMMON = ("Tensor query, Tensor key, Tensor value, Tensor dy, int head_num, str input_layout, *, "
                "Tensor? pse=None, Tensor? padding_mask=None, Tensor? atten_mask=None, Tensor? softmax_max=None, "
                "Tensor? softmax_sum=None, Tensor? softmax_in=None, Tensor? attention_in=None, float scale_value=1., "
                "float keep_prob=1., int pre_tockens=2147483647, int next_tockens=2147483647, int inner_precise=0, ")
SCHEMAS = {
    "npu_fusion_attention": "npu_fusion_attention(" + _COMMON
    + "int[]? prefix=None, int[]? actual_seq_qlen=None, int[]? actual_seq_kvlen=None, int sparse_mode=0, "
    'bool gen_mask_parallel=True, bool sync=False, str softmax_layout="", Tensor? sink=None, '
    "Tensor? dropout_mask=None, int seed=0, int offset=0) -> (Tensor, Tensor, Tensor, Tensor, int, int, int)",
    "npu_fusion_attention_grad": "npu_fusion_attention_grad(" + _GRAD_COMMON
    + "int seed=0, int offset=0, int numels=0, int[]? prefix=None, int[]? actual_seq_qlen=None, "
    "int[]? actual_seq_kvlen=None, int sparse_mode=0, bool gen_mask_parallel=True, bool sync=False, "
    'str softmax_layout="", Tensor? sink=None) -> (Tensor, Tensor, Tensor, Tensor, Tensor)',
    "npu_fusion_attention_v3": "npu_fusion_attention_v3(" + _COMMON
    + "SymInt[]? prefix=None, Tensor? actual_seq_qlen=None, Tensor? actual_seq_kvlen=None, int sparse_mode=0, "
    'bool gen_mask_parallel=True, bool sync=False, str softmax_layout="", Tensor? sink=None) '
    "-> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
    "npu_fusion_attention_grad_v3": "npu_fusion_attention_grad_v3(" + _GRAD_COMMON
    + "Tensor? seed=None, Tensor? offset=None, SymInt[]? prefix=None, Tensor? actual_seq_qlen=None, "
    "Tensor? actual_seq_kvlen=None, int sparse_mode=0, bool gen_mask_parallel=True, bool sync=False, "
    'str softmax_layout="", Tensor? sink=None) -> (Tensor, Tensor, Tensor, Tensor, Tensor)',
}


# -- layouts -------------------------------------------------------------------------------------
def to_bnsd(t: torch.Tensor, layout: str, heads: int) -> torch.Tensor:
    """``t`` in ``layout`` as [B, N, S, D] (``heads``: N of a 3-D layout)."""
    if layout == "BNSD":
        return t
    if layout == "BSND":
        return t.transpose(1, 2)
    if layout == "BSH":
        b, s, h = t.shape
        return t.reshape(b, s, heads, h // heads).transpose(1, 2)
    if layout == "SBH":
        s, b, h = t.shape
        return t.reshape(s, b, heads, h // heads).permute(1, 2, 0, 3)
    raise NotImplementedError(f"sim: npu_fusion_attention with input_layout {layout!r} is not simulated "
                              f"(layouts: {', '.join(LAYOUTS)}); run it on an NPU (--backend npu)")


def from_bnsd(t: torch.Tensor, layout: str) -> torch.Tensor:
    """[B, N, S, D] back into ``layout``."""
    if layout == "BNSD":
        return t.contiguous()
    if layout == "BSND":
        return t.transpose(1, 2).contiguous()
    b, n, s, d = t.shape
    if layout == "BSH":
        return t.transpose(1, 2).reshape(b, s, n * d)
    return t.permute(2, 0, 1, 3).reshape(s, b, n * d)  # SBH


def _kv_heads(t: torch.Tensor, layout: str, query: torch.Tensor, head_num: int) -> int:
    """How many heads a 3-D key/value has (grouped-query: H_kv = H_q * N_kv / N_q)."""
    if layout in ("BNSD", "BSND"):
        return t.shape[1 if layout == "BNSD" else 2]
    head_dim = query.shape[-1] // head_num
    return t.shape[-1] // head_dim


# -- the arithmetic ----------------------------------------------------------------------------
def masked_out(atten_mask: torch.Tensor | None, sparse_mode: int, pre: int, nxt: int, s1: int, s2: int,
               device: Any) -> torch.Tensor | None:
    """Boolean [.., S1, S2] (broadcastable to [B, N, S1, S2]): True where a score is masked out."""
    i = torch.arange(s1, device=device).unsqueeze(1)
    j = torch.arange(s2, device=device).unsqueeze(0)
    if sparse_mode == 2:
        return j > i
    if sparse_mode == 3:
        return j > i + (s2 - s1)
    if sparse_mode not in (0, 1):
        raise NotImplementedError(f"sim: npu_fusion_attention sparse_mode={sparse_mode} is not simulated "
                                  "(modes 0-3 are); run it on an NPU (--backend npu)")
    out = None if atten_mask is None else atten_mask.to(torch.bool)
    if sparse_mode == 0 and (pre < s1 + s2 or nxt < s1 + s2):
        band = (j - i > nxt) | (i - j > pre)
        out = band if out is None else out | band
    return out


def _probs(q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor | None, scale: float):
    """fp32 scores -> (probabilities, row max, row sum); fully masked rows give zero probabilities."""
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    row_max = scores.amax(-1, keepdim=True)
    safe_max = torch.where(torch.isinf(row_max), torch.zeros_like(row_max), row_max)
    e = torch.exp(scores - safe_max)
    row_sum = e.sum(-1, keepdim=True)
    probs = e / torch.where(row_sum == 0, torch.ones_like(row_sum), row_sum)
    return probs, row_max, row_sum


def _check_unsupported(name: str, keep_prob: float, pse: Any, padding_mask: Any, prefix: Any,
                       qlen: Any, kvlen: Any) -> None:
    if keep_prob < 1.0:
        raise NotImplementedError(
            f"sim: {name} with keep_prob={keep_prob} (attention dropout) is not simulated: NPU's random mask "
            "cannot be reproduced on the CPU; compile with dropout off (model.eval(), dropout_p=0) or on an NPU")
    for what, value in (("pse", pse), ("padding_mask", padding_mask), ("prefix", prefix),
                        ("actual_seq_qlen", qlen), ("actual_seq_kvlen", kvlen)):
        if value is not None:
            raise NotImplementedError(f"sim: {name} with {what} is not simulated; run it on an NPU (--backend npu)")


def _bnsd_heads(query, key, value, head_num, input_layout):
    """q, k, v as float BNSD with k and v repeated to the query's heads (grouped-query attention), and the group."""
    n_kv = _kv_heads(key, input_layout, query, head_num)
    q = to_bnsd(query, input_layout, head_num).float()
    k = to_bnsd(key, input_layout, n_kv).float()
    v = to_bnsd(value, input_layout, n_kv).float()
    groups = q.shape[1] // k.shape[1]
    return q, k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1), groups


def attention(query, key, value, head_num, input_layout, pse=None, padding_mask=None, atten_mask=None, scale=1.0,
              keep_prob=1.0, pre_tockens=TOKEN_MAX, next_tockens=TOKEN_MAX, inner_precise=0, prefix=None,
              actual_seq_qlen=None, actual_seq_kvlen=None, sparse_mode=0, **_ignored):
    """FlashAttentionScore on the CPU: (attention_out, softmax_max, softmax_sum, softmax_out)."""
    _check_unsupported("npu_fusion_attention", keep_prob, pse, padding_mask, prefix, actual_seq_qlen,
                       actual_seq_kvlen)
    q, k, v, _ = _bnsd_heads(query, key, value, head_num, input_layout)
    mask = masked_out(atten_mask, sparse_mode, pre_tockens, next_tockens, q.shape[2], k.shape[2], q.device)
    probs, row_max, row_sum = _probs(q, k, mask, scale)
    out = from_bnsd(torch.matmul(probs, v).to(query.dtype), input_layout)
    b, n, s1 = q.shape[:3]
    return (out, row_max.expand(b, n, s1, 8).contiguous(), row_sum.expand(b, n, s1, 8).contiguous(),
            query.new_empty([0]))


def attention_grad(query, key, value, dy, head_num, input_layout, *, pse=None, padding_mask=None, atten_mask=None,
                   scale_value=1.0, keep_prob=1.0, pre_tockens=TOKEN_MAX, next_tockens=TOKEN_MAX, prefix=None,
                   actual_seq_qlen=None, actual_seq_kvlen=None, sparse_mode=0, **_ignored):
    """FlashAttentionScoreGrad on the CPU: (dq, dk, dv, dpse, dsink), from the softmax recomputed."""
    _check_unsupported("npu_fusion_attention_grad", keep_prob, pse, padding_mask, prefix, actual_seq_qlen,
                       actual_seq_kvlen)
    q, kr, vr, groups = _bnsd_heads(query, key, value, head_num, input_layout)
    g = to_bnsd(dy, input_layout, head_num).float()
    mask = masked_out(atten_mask, sparse_mode, pre_tockens, next_tockens, q.shape[2], kr.shape[2], q.device)
    probs, _, _ = _probs(q, kr, mask, scale_value)
    d_probs = torch.matmul(g, vr.transpose(-2, -1))
    d_scores = probs * (d_probs - (d_probs * probs).sum(-1, keepdim=True))
    dq = torch.matmul(d_scores, kr) * scale_value
    dk = torch.matmul(d_scores.transpose(-2, -1), q) * scale_value
    dv = torch.matmul(probs.transpose(-2, -1), g)
    b, n, s2, d = dk.shape
    dk = dk.reshape(b, n // groups, groups, s2, d).sum(2)
    dv = dv.reshape(b, n // groups, groups, s2, dv.shape[-1]).sum(2)
    return (from_bnsd(dq.to(query.dtype), input_layout), from_bnsd(dk.to(query.dtype), input_layout),
            from_bnsd(dv.to(query.dtype), input_layout), query.new_empty([0]), query.new_empty([0]))


# -- the ops' kernels ----------------------------------------------------------------------------
def _meta(query, key, value, head_num, input_layout, *_args, **_kwargs):
    if input_layout in ("BSH", "SBH"):
        d = query.shape[-1] // head_num
        shape = list(query.shape[:-1]) + [head_num * (value.shape[-1] * d // max(1, key.shape[-1]))]
        b, s1 = (query.shape[0], query.shape[1]) if input_layout == "BSH" else (query.shape[1], query.shape[0])
    else:
        shape = list(query.shape[:-1]) + [value.shape[-1]]
        b, s1 = query.shape[0], query.shape[2 if input_layout == "BNSD" else 1]
    f32 = {"dtype": torch.float32, "device": query.device}
    return (query.new_empty(shape), torch.empty([b, head_num, s1, 8], **f32), torch.empty([b, head_num, s1, 8], **f32),
            query.new_empty([0]))


def fa(*args, **kwargs):
    return (*attention(*args, **kwargs), 0, 0, 0)


def fa_meta(*args, **kwargs):
    return (*_meta(*args, **kwargs), 0, 0, 0)


def fa_v3(*args, **kwargs):
    query = args[0]
    zero = torch.zeros([1], dtype=torch.long, device=query.device)
    return (*attention(*args, **kwargs), zero, zero.clone())


def fa_v3_meta(*args, **kwargs):
    query = args[0]
    return (*_meta(*args, **kwargs), torch.empty([1], dtype=torch.long, device=query.device),
            torch.empty([1], dtype=torch.long, device=query.device))


def fa_grad_meta(query, key, value, dy, head_num, input_layout, **kwargs):
    sink = kwargs.get("sink")
    return (torch.empty_like(query), key.new_empty(key.shape, dtype=query.dtype),
            value.new_empty(value.shape, dtype=query.dtype), query.new_empty([0]),
            query.new_empty([0]) if sink is None else torch.empty_like(sink))


# -- autograd: the grad op, as op-plugin's derivatives.yaml -------------------------------------------
_FWD_ARGS = ("query", "key", "value", "head_num", "input_layout", "pse", "padding_mask", "atten_mask", "scale",
             "keep_prob", "pre_tockens", "next_tockens", "inner_precise", "prefix", "actual_seq_qlen",
             "actual_seq_kvlen", "sparse_mode", "gen_mask_parallel", "sync", "softmax_layout", "sink")


def _setup(ctx: Any, inputs: tuple, output: tuple) -> None:
    named = dict(zip(_FWD_ARGS, inputs, strict=False))
    ctx.named = {k: v for k, v in named.items() if not isinstance(v, torch.Tensor)}
    ctx.save_for_backward(named["query"], named["key"], named["value"], named.get("atten_mask"), output[0],
                          output[1], output[2], output[3])
    ctx.seeds = output[4:]


def _backward(grad_op: Any, v3: bool):
    def backward(ctx: Any, grad_out: torch.Tensor, *_rest: Any) -> tuple:
        q, k, v, mask, out, smax, ssum, sout = ctx.saved_tensors
        a = ctx.named
        extra = {"seed": ctx.seeds[0], "offset": ctx.seeds[1]} if v3 else {
            "seed": ctx.seeds[0], "offset": ctx.seeds[1], "numels": ctx.seeds[2]}
        dq, dk, dv, _dpse, _dsink = grad_op(
            q, k, v, grad_out, a["head_num"], a["input_layout"], atten_mask=mask, softmax_max=smax,
            softmax_sum=ssum, softmax_in=sout, attention_in=out, scale_value=a.get("scale", 1.0),
            keep_prob=a.get("keep_prob", 1.0), pre_tockens=a.get("pre_tockens", TOKEN_MAX),
            next_tockens=a.get("next_tockens", TOKEN_MAX), inner_precise=a.get("inner_precise", 0),
            sparse_mode=a.get("sparse_mode", 0), **extra)
        return (dq, dk, dv) + (None,) * (len(_FWD_ARGS) - 3 + (0 if v3 else 3))

    return backward


def register(lib: Any) -> None:
    """Define the four ops in ``lib`` (a ``torch.library.Library("npu", "FRAGMENT")``) with their
    kernels and autograd, skipping any that exists (real torch_npu)."""
    kernels = {"npu_fusion_attention": (fa, fa_meta), "npu_fusion_attention_v3": (fa_v3, fa_v3_meta),
               "npu_fusion_attention_grad": (attention_grad, fa_grad_meta),
               "npu_fusion_attention_grad_v3": (attention_grad, fa_grad_meta)}
    defined = []
    for name, schema in SCHEMAS.items():
        if hasattr(torch.ops.npu, name):
            continue
        lib.define(schema)
        cpu, meta = kernels[name]
        lib.impl(name, cpu, "CPU")
        lib.impl(name, meta, "Meta")
        defined.append(name)
    for fwd, v3 in (("npu_fusion_attention", False), ("npu_fusion_attention_v3", True)):
        if fwd in defined:
            grad_op = getattr(torch.ops.npu, fwd.replace("attention", "attention_grad")).default
            torch.library.register_autograd(f"npu::{fwd}", _backward(grad_op, v3), setup_context=_setup, lib=lib)



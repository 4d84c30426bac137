"""Sim's fused attention kernels and SDPA dispatch against torch's own CPU SDPA.

The compiled-vs-eager check of a run cannot catch an error in these kernels (airctl's eager
reference runs them too), so their numerics are checked here against torch's CPU kernel, taken
outside any sim session (where sim's SDPA kernel defers to torch's own).
"""

from __future__ import annotations

import math

import pytest
import torch
from torch.nn import functional

from airctl.backends.sim import sim_context
from airctl.pipeline.run.execution import RunExecution
from airctl.sim.session import SimContext, load_torchair, session

TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


@pytest.fixture(scope="module", autouse=True)
def _ops() -> None:
    load_torchair()  # defines the npu:: ops and registers torch_npu's composite kernels


def _qkv(dtype: torch.dtype, n_kv: int = 4, s2: int = 12) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 4, 10, 16, generator=g).to(dtype)
    k = torch.randn(2, n_kv, s2, 16, generator=g).to(dtype)
    v = torch.randn(2, n_kv, s2, 16, generator=g).to(dtype)
    return q, k, v


def _reference(q, k, v, **kw) -> torch.Tensor:
    """torch's own CPU SDPA in fp32 (not in a sim session, so not sim's kernel)."""
    return functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), **kw)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_fused_kernel_matches_torch_sdpa(dtype: torch.dtype) -> None:
    q, k, v = _qkv(dtype)
    fa = torch.ops.npu.npu_fusion_attention
    scale = 1 / math.sqrt(16)
    # plain
    out = fa(q, k, v, 4, "BNSD", scale=scale)[0]
    assert out.dtype == dtype and out.shape == (2, 4, 10, 16)
    torch.testing.assert_close(out.float(), _reference(q, k, v), atol=TOL[dtype], rtol=TOL[dtype])
    # causal from the top left with NPU's compressed mask (sparse_mode 2)
    causal = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), 1)
    q2, k2, v2 = _qkv(dtype, s2=10)
    out = fa(q2, k2, v2, 4, "BNSD", atten_mask=causal, scale=scale, next_tockens=0, sparse_mode=2)[0]
    torch.testing.assert_close(out.float(), _reference(q2, k2, v2, is_causal=True), atol=TOL[dtype],
                               rtol=TOL[dtype])
    # a boolean mask: True masks OUT on the NPU, keeps IN in torch
    keep = torch.rand(10, 12, generator=torch.Generator().manual_seed(1)) > 0.3
    keep[:, 0] = True
    out = fa(q, k, v, 4, "BNSD", atten_mask=keep.logical_not(), scale=scale)[0]
    torch.testing.assert_close(out.float(), _reference(q, k, v, attn_mask=keep), atol=TOL[dtype], rtol=TOL[dtype])
    # an explicit scale
    out = fa(q, k, v, 4, "BNSD", scale=0.3)[0]
    torch.testing.assert_close(out.float(), _reference(q, k, v, scale=0.3), atol=TOL[dtype], rtol=TOL[dtype])


def test_grouped_query_and_layouts() -> None:
    q, k, v = _qkv(torch.float32, n_kv=2)
    expected = _reference(q, k, v, enable_gqa=True)
    fa = torch.ops.npu.npu_fusion_attention
    out = fa(q, k, v, 4, "BNSD", scale=0.25)[0]
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    bsnd = fa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), 4, "BSND", scale=0.25)[0]
    torch.testing.assert_close(bsnd, expected.transpose(1, 2), atol=1e-5, rtol=1e-5)
    bsh = fa(*(t.transpose(1, 2).flatten(2) for t in (q, k, v)), 4, "BSH", scale=0.25)[0]
    torch.testing.assert_close(bsh, expected.transpose(1, 2).flatten(2), atol=1e-5, rtol=1e-5)


def test_softmax_outputs_and_v3() -> None:
    q, k, v = _qkv(torch.float32)
    out, smax, ssum, sout, *seeds = torch.ops.npu.npu_fusion_attention(q, k, v, 4, "BNSD", scale=0.25)
    assert smax.shape == ssum.shape == (2, 4, 10, 8) and smax.dtype == torch.float32 and sout.numel() == 0
    scores = (q @ k.transpose(-2, -1)) * 0.25
    torch.testing.assert_close(smax[..., 0], scores.amax(-1))
    torch.testing.assert_close(ssum[..., 0], torch.exp(scores - scores.amax(-1, keepdim=True)).sum(-1))
    assert seeds == [0, 0, 0]
    v3 = torch.ops.npu.npu_fusion_attention_v3(q, k, v, 4, "BNSD", scale=0.25)
    assert len(v3) == 6 and v3[4].dtype == torch.long
    torch.testing.assert_close(v3[0], out)
    meta = torch.ops.npu.npu_fusion_attention(q.to("meta"), k.to("meta"), v.to("meta"), 4, "BNSD")
    assert [tuple(t.shape) for t in meta[:4]] == [(2, 4, 10, 16), (2, 4, 10, 8), (2, 4, 10, 8), (0,)]


def test_gradients_match_autograd_of_torch_sdpa() -> None:
    q, k, v = (t.requires_grad_() for t in _qkv(torch.float32, n_kv=2))
    causal = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), 1)
    out = torch.ops.npu.npu_fusion_attention(q, k, v, 4, "BNSD", atten_mask=causal, scale=0.25, next_tockens=0,
                                             sparse_mode=2)[0]
    grad = torch.randn_like(out)
    got = torch.autograd.grad(out, (q, k, v), grad)
    q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
    ref = functional.scaled_dot_product_attention(q2, k2, v2, is_causal=True, scale=0.25, enable_gqa=True)
    want = torch.autograd.grad(ref, (q2, k2, v2), grad)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_unsupported_arguments_say_so() -> None:
    q, k, v = _qkv(torch.float32)
    with pytest.raises(NotImplementedError, match="dropout"):
        torch.ops.npu.npu_fusion_attention(q, k, v, 4, "BNSD", keep_prob=0.9)
    with pytest.raises(NotImplementedError, match="TND"):
        torch.ops.npu.npu_fusion_attention(q[0], k[0], v[0], 4, "TND")


def _ctx(soc: str) -> SimContext:
    ctx = sim_context(RunExecution())
    ctx.soc = soc
    return ctx


@pytest.mark.parametrize("soc,op", [("Ascend950", "npu.npu_fusion_attention.default"),
                                    ("Ascend910B2", "npu.npu_fusion_attention_v3.default"),
                                    ("Ascend910A", "aten._safe_softmax.default")])
def test_sdpa_traces_what_the_npu_kernel_calls(soc: str, op: str) -> None:
    from torch.fx.experimental.proxy_tensor import make_fx

    def attend(q, k, v):
        return functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    q, k, v = _qkv(torch.float32, s2=10)
    with session(_ctx(soc)):
        gm = make_fx(attend, tracing_mode="fake")(q, k, v)
        eager = attend(q, k, v)
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert op in targets, targets
    assert "aten._scaled_dot_product_flash_attention_for_cpu.default" not in targets
    torch.testing.assert_close(eager, _reference(q, k, v, is_causal=True), atol=1e-5, rtol=1e-5)
    # outside the session torch's own kernel is back
    gm = make_fx(attend, tracing_mode="fake")(q, k, v)
    assert "aten._scaled_dot_product_flash_attention_for_cpu.default" in [str(n.target) for n in gm.graph.nodes]


def test_float_mask_and_odd_fp32_head_dim_take_the_math_path() -> None:
    from torch.fx.experimental.proxy_tensor import make_fx

    q, k, v = _qkv(torch.float32, s2=10)
    bias = torch.randn(10, 10)
    odd = tuple(t[..., :6] for t in (q, k, v))
    with session(_ctx("Ascend950")):
        biased = make_fx(lambda q, k, v, b: functional.scaled_dot_product_attention(q, k, v, attn_mask=b),
                         tracing_mode="fake")(q, k, v, bias)
        odd_gm = make_fx(lambda q, k, v: functional.scaled_dot_product_attention(q, k, v), tracing_mode="fake")(*odd)
        got = functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    for gm in (biased, odd_gm):
        targets = {str(n.target) for n in gm.graph.nodes}
        assert "aten._safe_softmax.default" in targets and "npu.npu_fusion_attention.default" not in targets
    want = functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_one_hot_traces_the_npu_kernel() -> None:
    from torch.fx.experimental.proxy_tensor import make_fx

    idx = torch.tensor([[0, 3], [2, 1]])
    with session(_ctx("Ascend950")):
        gm = make_fx(lambda i: functional.one_hot(i, 4), tracing_mode="fake")(idx)
        got = functional.one_hot(idx, 4)
        auto = functional.one_hot(idx)
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == ["aten.arange.default", "aten.unsqueeze.default", "aten.eq.Tensor",
                       "aten._to_copy.default"], targets
    torch.testing.assert_close(got, functional.one_hot(idx, 4))
    torch.testing.assert_close(auto, functional.one_hot(idx))
    assert got.dtype == torch.long

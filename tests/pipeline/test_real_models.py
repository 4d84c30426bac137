"""What real models hold compiles under sim: SDPA (the NPU's graph: fused attention or the math path),
one_hot, and a small Llama (RMSNorm, rotary embedding, grouped-query attention, SwiGLU)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import MODELS

pytestmark = pytest.mark.slow


def _compile(model: Path, out: Path, mode: str = "max-autotune"):
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    return compile_model(CompileRequest.of(model, mode=mode, out_dir=out, backend="sim"))


def _targets(result, stage: str) -> list[str]:
    from airctl.ledger.reader import Ledger

    led = Ledger.open(result.ledger_dir)
    return [n.op for n in led.load(led.find_stage(stage))]


@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_sdpa_compiles_to_the_npu_graph_and_matches_eager(tmp_path: Path, mode: str) -> None:
    result = _compile(MODELS / "sdpa_attention.py", tmp_path, mode)
    assert result.error is None, result.error
    assert result.execution.matches_eager
    fx = _targets(result, "fx-final")
    # the causal call: torch_npu's fused kernel (Ascend950, sim's default SoC); the float mask: the math path
    assert fx.count("npu.npu_fusion_attention.default") == 1 and "aten.triu.default" in fx
    assert "aten._safe_softmax.default" in fx
    assert not any("scaled_dot_product" in t for t in fx)
    if mode == "max-autotune":
        ge = _targets(result, "ge-optimized")
        assert ge.count("FlashAttentionScore") == 1 and "SoftmaxV2" in ge


def test_sdpa_on_atlas_a2_calls_v3_which_torchair_cannot_convert(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AIRCTL_SIM_SOC", "Ascend910B2")
    result = _compile(MODELS / "sdpa_attention.py", tmp_path)
    assert result.error is not None and "No AscendIR NpuFusionAttentionV3" in result.error.message
    assert "AIRCTL_SIM_SOC=Ascend950" in result.error.hint
    assert "npu.npu_fusion_attention_v3.default" in _targets(result, "fx-final")


def test_one_hot_compiles_in_max_autotune(tmp_path: Path) -> None:
    model = tmp_path / "onehot.py"
    model.write_text(
        "import torch\nfrom torch.nn.functional import one_hot\n\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, idx, w):\n"
        "        return one_hot(idx, 6).float() @ w\n\n"
        "def get_model():\n    return M()\n\n"
        "def get_inputs():\n    torch.manual_seed(0)\n    return torch.randint(0, 6, (4, 3)), torch.randn(6, 5)\n")
    result = _compile(model, tmp_path / "runs")
    assert result.error is None, result.error
    assert result.execution.matches_eager
    assert "aten.eq.Tensor" in _targets(result, "fx-final")


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
def test_two_layer_llama_compiles_and_matches_eager(tmp_path: Path, monkeypatch, attention: str) -> None:
    monkeypatch.setenv("AIRCTL_LLAMA_LAYERS", "2")
    monkeypatch.setenv("AIRCTL_LLAMA_ATTENTION", attention)
    result = _compile(MODELS / "llama.py", tmp_path)
    assert result.error is None, result.error
    assert result.execution.matches_eager
    aot = next(s for s in result.index.stages() if s.name.startswith("aot-"))
    assert 200 <= (aot.entry.nodes or 0) <= 600
    if attention == "sdpa":
        assert _targets(result, "fx-final").count("npu.npu_fusion_attention.default") == 2

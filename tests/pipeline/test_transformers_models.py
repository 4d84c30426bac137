"""Hugging Face transformers models, built from tiny configs (random weights, no hub), compile under sim
unmodified: reduce-overhead always, max-autotune wherever TorchAir converts every op, else exit 3 naming
every op it cannot convert with the transformers line that made it (issue 29)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import airctl
from airctl.pipeline.target import EveryMode
from tests.conftest import MODELS

pytest.importorskip("transformers")
pytestmark = pytest.mark.slow

AIRCTL_PACKAGE = Path(airctl.__file__).resolve().parent
FIXTURES = ["llama", "qwen3", "qwen3_moe", "bert", "vit", "gpt2"]
# models TorchAir cannot convert to GE, and the ops it cannot convert (every one, in one error)
UNCONVERTIBLE = {"qwen3_moe": {"aten.histc.default", "transformers.grouped_mm_fallback.default",
                               "aten.index_put.default"}}


def _sources(ledger: Path) -> list[tuple[str, str, str]]:
    """(stage file, node, source) of every node of every FX snapshot of a ledger."""
    rows = []
    for path in sorted((ledger / "graphs").rglob("*.json.gz")):
        graph = json.loads(gzip.decompress(path.read_bytes()))
        rows += [(path.name, n["name"], n["source"]) for n in graph["nodes"] if n.get("source")]
    return rows


# every model in one mode in the suite, and each mode on three models (qwen3_moe's max-autotune: its exit 3);
# these in their other mode are sweeps (--sweeps)
SWEPT = {("llama", "reduce-overhead"), ("qwen3", "max-autotune"), ("vit", "max-autotune"), ("gpt2", "reduce-overhead"),
         ("bert", "max-autotune"), ("qwen3_moe", "reduce-overhead")}


@pytest.mark.parametrize(("model", "mode"), [
    pytest.param(model, mode, marks=pytest.mark.sweep) if (model, mode) in SWEPT else (model, mode)
    for model in FIXTURES for mode in ("reduce-overhead", "max-autotune")])
def test_transformers_model_compiles_and_matches_eager(compile_fixture, model: str, mode: str) -> None:
    result = compile_fixture(f"transformers/{model}", mode)
    index = result.index.to_json()
    if mode == "max-autotune" and model in UNCONVERTIBLE:
        error = index["error_detail"]
        assert index["status"] == "failed" and result.error.exit_code == 3
        ops = {u["op"]: u for u in error["unconvertible"]}
        assert set(ops) == UNCONVERTIBLE[model]
        for u in ops.values():
            assert "/transformers/" in u["source"] and u["count"] >= 1 and u["reason"] in ("no converter", "stub")
            assert "experts_implementation" in u["workaround"]
        assert "/transformers/" in error["file"] and "experts_implementation" in error["hint"]
    else:
        assert index["status"] == "ok", index["error"]
        assert index["execution"]["matches_eager"] is True
        assert len(index["graphs"]) >= 1
    rows = _sources(result.ledger_dir)
    assert rows, "no node has a source line"
    ours = [r for r in rows if Path(r[2].rsplit(":", 1)[0]).resolve().is_relative_to(AIRCTL_PACKAGE)]
    assert not ours, f"source lines inside the airctl package: {ours[:5]}"


def test_coverage_names_every_unconvertible_op_of_a_moe_model(tmp_path: Path) -> None:
    from airctl.pipeline.coverage import coverage

    found = coverage(MODELS / "transformers" / "qwen3_moe.py", out_dir=tmp_path, every=EveryMode(backend="sim"))
    assert {u["op"] for u in found.ops} == UNCONVERTIBLE["qwen3_moe"]
    assert found.error is not None and found.error.exit_code == 3
    assert all("/transformers/integrations/moe.py:" in u["source"] for u in found.ops)
    # no GE graph was built: the compile stopped at TorchAir's last FX hook
    index = json.loads((Path(found.ledger) / "index.json").read_text())
    assert not [s for g in index["graphs"] for s in g["stages"] if s["name"].startswith("ge-")]
    # an eval-mode model is traced as inference (AOT's forward graph, no joint graph), without an eager run
    assert [g["kind"] for g in index["graphs"]] == ["inference"]
    assert "eager_seconds" not in index["timings"] and found.to_json()["answer_seconds"] > 0


def test_coverage_of_a_convertible_model(tmp_path: Path) -> None:
    from airctl.pipeline.coverage import coverage

    found = coverage(MODELS / "transformers" / "gpt2.py", out_dir=tmp_path, every=EveryMode(backend="sim"))
    assert found.ops == [] and found.error is None and found.graphs == 1
    assert found.to_json()["convertible"] is True


def test_coverage_of_a_training_step_traces_its_backward(tmp_path: Path) -> None:
    from airctl.pipeline.coverage import coverage

    found = coverage(MODELS / "transformers" / "llama_train.py", out_dir=tmp_path, every=EveryMode(backend="sim"))
    index = json.loads((Path(found.ledger) / "index.json").read_text())
    kinds = [g["kind"] for g in index["graphs"]]
    assert "forward" in kinds and "backward" in kinds, index["graphs"]  # a training trace: AOT's joint graph split


def test_torchair_warnings_are_kept_in_the_ledger_not_printed(tmp_path: Path) -> None:
    from airctl.cli.main import build_app

    r = CliRunner().invoke(build_app(), ["compile", str(MODELS / "transformers" / "bert.py"), "--mode",
                                         "reduce-overhead", "--backend", "sim", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "warnings.warn(" not in r.output and "UserWarning:" not in r.output
    assert "TorchAir warnings: " in r.output
    (ledger,) = [p for p in tmp_path.iterdir() if (p / "index.json").is_file()]
    kept = json.loads((ledger / "index.json").read_text())["torchair_warnings"]
    assert kept["count"] >= 2 and sum(kept["by_kind"].values()) == kept["count"]
    assert any("reduce-overhead" in m["message"] for m in kept["messages"])


def test_module_paths_are_the_models_own_and_a_module_selector_finds_them(compile_fixture, tmp_path: Path) -> None:
    """transformers decorates forward (``wrapper(*args)``): Dynamo names the model ``L['args'][0]``;
    the ledger's module paths are relative to the model, as users write them in a pass file."""
    from airctl.cli.main import build_app

    result = compile_fixture("transformers/llama", "max-autotune")
    modules = set()
    for path in (result.ledger_dir / "graphs").rglob("*.json.gz"):
        modules |= {n["module"] for n in json.loads(gzip.decompress(path.read_bytes()))["nodes"] if n.get("module")}
    assert any(m.startswith("model.layers.1.mlp") for m in modules), sorted(modules)[:10]
    assert not [m for m in modules if m.startswith(("L[", "G["))], sorted(modules)[:10]
    passes = tmp_path / "mlp.yaml"
    passes.write_text("version: 1\npasses:\n  - name: mlp-side\n    kind: stream_scope\n    stream: '1'\n"
                      "    select: {module: model.layers.*.mlp}\n    each: model.layers.*\n", encoding="utf-8")
    r = CliRunner().invoke(build_app(), ["passes", "apply", str(passes), "--model", str(MODELS / "transformers" /
                                         "llama.py"), "--plan", "--backend", "sim", "--out", str(tmp_path / "runs")])
    assert r.exit_code == 0, r.output
    assert "mlp-side" in r.output and "changed" in r.output, r.output

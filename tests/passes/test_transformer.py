"""Acceptance 2: the two-stream plan for the transformer fixture compiles in both modes, keeps eager
results, and leaves no error-level verifier finding in the FX graph TorchAir converts."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from airctl.io.json_io import read_json
from airctl.pipeline.apply import apply_passes
from airctl.pipeline.target import Target
from tests.conftest import MODELS
from tests.passes.conftest import PASSES

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_two_stream_plan_matches_eager(tmp_path, mode: str) -> None:
    from airctl.verify import verify

    target = Target(MODELS / "transformer.py", mode=mode, backend="sim",
                    passes_file=PASSES / "transformer_two_streams.yaml")
    result = apply_passes(target, out=tmp_path, report=False)
    assert result.error is None, result.error
    assert result.execution["matches_eager"] is True
    assert all(p.changed and p.eager_check["matches"] for p in result.passes)

    index = json.loads((result.ledger_dir / "index.json").read_text())
    (graph,) = index["graphs"]
    (final,) = [s for s in graph["stages"] if s["name"] == "fx-final"]
    fx = read_json(result.ledger_dir / final["file"])
    layers = 3
    streams = Counter(n.stream for n in fx.nodes if n.op.startswith("aten."))
    assert streams["attn_kv"] > 0 and streams["mlp"] > 0
    ops = Counter(n.op for n in fx.nodes)
    assert ops["air.scope_enter.default"] == ops["air.scope_exit.default"] == 2 * layers
    assert ops["air.record.default"] == 4 * layers and ops["air.wait.default"] == 4 * layers
    # the k/v projections and the MLP linears run on their side streams
    for node in fx.nodes:
        if node.module and node.op == "aten.addmm.default":
            if ".attn.k_proj" in node.module or ".attn.v_proj" in node.module:
                assert node.stream == "attn_kv", node.name
            elif ".mlp." in node.module:
                assert node.stream == "mlp", node.name
            else:
                assert node.stream is None, node.name
    errors = [f for f in verify(fx, mode) if f.severity == "error"]
    assert errors == [], [f.message for f in errors]

"""passes suggest --memory-budget (issue: device memory): the plan written stays within the budget, says what
the budget cost, and each pass's comment gives its time gain and its memory cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.errors import AirctlError
from airctl.pipeline.suggest_memory import Budget, parse_budget

MODELS = Path(__file__).resolve().parents[2] / "fixtures" / "models"


@pytest.mark.parametrize(("text", "budget"), [("512MiB", Budget(bytes=512 << 20)), ("2G", Budget(bytes=2 << 30)),
                                              ("1000000", Budget(bytes=1000000)), ("+10%", Budget(over_pct=10.0)),
                                              ("+0", Budget(over_pct=0.0))])
def test_budgets_parse(text: str, budget: Budget) -> None:
    assert parse_budget(text) == budget


@pytest.mark.parametrize("text", ["", "lots", "-5%", "12 parsecs", "1e99x"])
def test_a_budget_that_is_not_a_size_is_refused(text: str) -> None:
    with pytest.raises(AirctlError, match="is not a size"):
        parse_budget(text)


@pytest.mark.slow
def test_a_held_out_transformers_model_stays_within_its_budget(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    plan = tmp_path / "plan.yaml"
    r = CliRunner().invoke(build_app(), ["passes", "suggest", str(MODELS / "transformers" / "mistral.py"), "--mode",
                                         "reduce-overhead", "--memory-budget", "+0%", "-o", str(plan), "--out",
                                         str(tmp_path / "runs"), "--backend", "sim", "--json", "--no-check"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    memory = data["memory"]
    assert memory["peak_bytes"] <= memory["limit_bytes"] == memory["single_stream_peak_bytes"]
    assert memory["cost_us"] >= 0.0 and memory["within"]
    if data["passes_file"]:  # each moved region's comment: its gain and its memory cost
        assert "bytes of peak memory" in plan.read_text()


@pytest.mark.slow
def test_check_max_memory_increase_names_the_stretched_tensor(tmp_path: Path) -> None:
    """two_chains with passes/two_chains.yaml in reduce-overhead: the side chain's last matmul is read on the
    default stream by the add and never ordered back, so it lives to the end: +262 656 bytes over one stream
    (a 256×256 fp32 block, 262 144 + 32 rounded up to 512)."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    plan = str(MODELS.parents[1] / "passes" / "two_chains.yaml")
    result = compile_model(CompileRequest.of(MODELS / "two_chains.py", mode="reduce-overhead", out_dir=tmp_path,
                                             backend="sim", passes_file=plan))
    assert result.error is None, result.error
    app = build_app()
    r = CliRunner().invoke(app, ["check", str(result.ledger_dir), "--max-memory-increase", "0", "--json"])
    assert r.exit_code == 1, r.output
    found = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "memory_increase"]
    assert len(found) == 1 and "262656 bytes" in found[0]["message"] and found[0]["nodes"]
    assert CliRunner().invoke(app, ["check", str(result.ledger_dir), "--max-memory-increase", "1MiB"]).exit_code == 0
    # profile --times --compare says the same: every live block is a 256×256 fp32 tensor, 262 656 bytes as the
    # allocator rounds it; one stream holds 25 at its peak, the plan one more (mm_19, kept to the end)
    times = tmp_path / "t.csv"
    times.write_text("op,us\n*,10\n", encoding="utf-8")
    r = CliRunner().invoke(app, ["profile", str(result.ledger_dir), "--times", str(times), "--compare", "--json",
                                 "--out", str(tmp_path)])
    memory = json.loads(r.stdout)["memory"]
    assert (memory["single_stream_peak_bytes"], memory["peak_bytes"]) == (25 * 262656, 26 * 262656)
    assert [g["tensor"] for g in memory["grew"]] == ["mm_19"]
    bad = CliRunner().invoke(app, ["check", str(result.ledger_dir), "--max-memory-increase", "lots"])
    assert bad.exit_code == 2 and "not a size or a percentage" in bad.output

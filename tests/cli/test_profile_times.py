"""``airctl profile --times``: predicted profiles against hand-computed critical paths (all three
modes), the profiler fixtures' own step times, bad tables and unmatched nodes (issue: prediction)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "fixtures" / "profiles"
runner = CliRunner()
MM_US, ADD_US = 100.0, 7.0


def airctl(*args: object):  # noqa: ANN201
    return runner.invoke(build_app(), ["profile", *map(str, args)])


def times_csv(tmp_path: Path) -> Path:
    # op rows for both dialects: the FX targets (aclgraph modes) and GE's types (max-autotune)
    path = tmp_path / "times.csv"
    path.write_text(f"op,us\naten.mm.default,{MM_US}\nMatMul,{MM_US}\naten.add.Tensor,{ADD_US}\nAdd,{ADD_US}\n",
                    encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead", "npugraph_ex"])
def test_two_stream_plan_predicts_the_hand_computed_critical_path(tmp_path: Path, mode: str, monkeypatch) -> None:
    """two_chains (depth 3): left's 3 mm on the default stream beside right's 3 on stream_1, then the add
    that waits for both: 3 × 100 + 7 µs, whatever the mode; one stream: 6 × 100 + 7."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    monkeypatch.setenv("AIRCTL_TWO_CHAINS_N", "16")
    monkeypatch.setenv("AIRCTL_TWO_CHAINS_DEPTH", "3")
    result = compile_model(CompileRequest.of(REPO / "fixtures/models/two_chains.py", mode=mode,
                                             out_dir=tmp_path / "runs", backend="sim",
                                             passes_file=str(REPO / "passes/two_chains.yaml")))
    assert result.error is None, result.error
    r = airctl(result.ledger_dir, "--times", times_csv(tmp_path), "--json", "--launch-us", "0", "--compare")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    plan, single = data["with"]["predicted"], data["without"]["predicted"]
    assert plan["unmatched"] == 0, plan["unmatched_nodes"]
    hand = 3 * MM_US + ADD_US
    assert plan["step_us"] == pytest.approx(hand, rel=0.01)
    assert plan["critical_path_us"] == pytest.approx(hand, rel=0.01)
    assert plan["overlap_us"] == pytest.approx(3 * MM_US, rel=0.01)
    assert set(plan["streams"]) == {"default", "stream_1"}
    assert single["step_us"] == pytest.approx(6 * MM_US + ADD_US, rel=0.01)
    assert data["saved_us"] == pytest.approx(3 * MM_US, rel=0.01)
    assert data["with"]["meta"]["predicted"] is True and data["with"]["meta"]["times_from"].endswith("times.csv")
    saved = json.loads((Path(result.ledger_dir) / "profile" / "summary.json").read_text())
    assert saved["predicted"]["step_us"] == pytest.approx(hand, rel=0.01)


@pytest.mark.parametrize("folder", ["npu_level1", "npu_level0", "npu_db", "npu_two_streams", "npu_trace_only",
                                    "npu_two_ranks"])
def test_the_plan_a_profile_measured_replays_to_its_measured_step(tmp_path: Path, folder: str) -> None:
    r = airctl(PROFILES / folder, "--times", PROFILES / folder, "--json", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    pred = json.loads(r.stdout)["predicted"]
    assert abs(pred["span_us"] - pred["measured_us"]) <= 0.03 * pred["measured_us"]


def test_the_terminal_labels_every_number_predicted(tmp_path: Path) -> None:
    r = airctl(PROFILES / "npu_two_streams", "--times", PROFILES / "npu_two_streams", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert "predicted NPU profile" in r.stdout and "predicted NPU step: 67 µs" in r.stdout
    assert "measured on the NPU: 67 µs" in r.stdout and "CPU timings" not in r.stdout


def test_a_bad_table_is_exit_2_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("node,us\nMatMul,-3\n", encoding="utf-8")
    r = airctl(PROFILES / "npu_two_streams", "--times", bad, "--out", tmp_path)
    assert r.exit_code == 2
    assert "bad.csv:2" in r.output and "at least 0" in r.output


def test_unmatched_kernels_are_counted_and_listed(tmp_path: Path) -> None:
    partial = tmp_path / "partial.csv"
    partial.write_text("node,us\nMatMul,40\nAbs,10\n", encoding="utf-8")
    r = airctl(PROFILES / "npu_two_streams", "--times", partial, "--json", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    pred = json.loads(r.stdout)["predicted"]
    assert pred["unmatched"] == 4 and set(pred["unmatched_nodes"]) == {"Mul", "Add", "Sub", "EVENT_RECORD"}


def test_a_table_of_another_model_is_refused(tmp_path: Path) -> None:
    import shutil

    ledger = tmp_path / "ledger"
    shutil.copytree(PROFILES / "seed_ledger", ledger)
    other = tmp_path / "other.csv"
    other.write_text("node,us\nconv1,3\nfc2,4\n", encoding="utf-8")
    r = airctl(ledger, "--times", other)
    assert r.exit_code == 2
    assert "none of the 2 names in the table" in r.output and "other.csv" in r.output


def test_the_estimate_is_labelled_an_estimate(tmp_path: Path) -> None:
    import shutil

    ledger = tmp_path / "ledger"
    shutil.copytree(PROFILES / "seed_ledger", ledger)
    r = airctl(ledger, "--times", "estimate", "--device", "910C", "--json")
    assert r.exit_code == 0, r.output
    pred = json.loads(r.stdout)["predicted"]
    assert pred["estimate"] is True and pred["device"] == "910C" and pred["step_us"] > 0
    r = airctl(ledger, "--times", "estimate")
    assert "an estimate" in r.stdout


def test_a_profile_of_another_model_says_most_kernels_have_no_time(tmp_path: Path) -> None:
    import shutil

    ledger = tmp_path / "ledger"
    shutil.copytree(PROFILES / "seed_ledger", ledger)
    r = airctl(ledger, "--times", PROFILES / "npu_level1")  # a data-parallel step: only its Add matches
    assert r.exit_code == 0, r.output
    assert "3 of 4 kernels have no time" in r.output and "another model" in r.output
    assert "unmatched: 3 kernel(s)" in r.output


@pytest.mark.slow
def test_a_model_script_is_compiled_then_predicted_with_the_mechanism_named(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AIRCTL_TWO_CHAINS_N", "16")
    monkeypatch.setenv("AIRCTL_TWO_CHAINS_DEPTH", "2")
    r = airctl(REPO / "fixtures/models/two_chains.py", "--passes", REPO / "passes/two_chains.yaml", "--mode",
               "reduce-overhead", "--times", times_csv(tmp_path), "--compare", "--out", tmp_path / "runs")
    assert r.exit_code == 0, r.output
    assert "single stream vs the plan" in r.stdout
    assert "saves 200.0 µs a step: 200.0 µs of overlap gained on stream_1" in r.stdout
    (ledger,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir() and not p.name.startswith(".")]
    compare = json.loads((ledger / "profile" / "compare.json").read_text())
    assert compare["predicted"] is True and compare["saved_us"] == pytest.approx(200.0)

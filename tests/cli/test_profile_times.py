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
    _cores_and_bandwidth_by_hand(result.ledger_dir, tmp_path)


def _cores_and_bandwidth_by_hand(ledger: Path, tmp_path: Path) -> None:
    """The same plan on a 910B2 (24 cube + 48 vector cores, 1.2 TB/s), by hand:
    - each matmul on all 24 cube cores: the two chains share the cube pool, 6 × 100 + 7 (no gain);
    - 12 cube cores each: both chains fit, 3 × 100 + 7 again;
    - each 16×16 fp32 matmul moves 3 × 1 KiB; at 0.001 µs it would need 3 MB/µs, more than the 1.2 MB/µs
      the chip has: memory-bound, capped at the bandwidth, so the two chains share it: 6 × 0.001 + 7."""
    def predict(rows: str) -> dict:
        table = tmp_path / "device.csv"
        table.write_text("op,us,cores\n" + rows, encoding="utf-8")
        r = airctl(ledger, "--times", table, "--device", "910B2", "--json", "--launch-us", "0")
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)["predicted"]

    def rows(mm_us: float, cube: int | str) -> str:
        return "".join(f"{op},{mm_us},{cube}\n" for op in ("aten.mm.default", "MatMul")) + \
            "".join(f"{op},{ADD_US},\n" for op in ("aten.add.Tensor", "Add"))

    every = predict(rows(MM_US, 24))
    assert every["step_us"] == pytest.approx(6 * MM_US + ADD_US, rel=1e-6)
    assert every["device"] == "910B2" and every["core_bound_us"] == pytest.approx(6 * MM_US, rel=1e-6)
    assert predict(rows(MM_US, 12))["step_us"] == pytest.approx(3 * MM_US + ADD_US, rel=1e-6)
    fast = predict(rows(0.001, ""))
    assert fast["step_us"] == pytest.approx(6 * 0.001 + ADD_US, abs=1e-7)
    assert fast["bandwidth_bound_us"] == pytest.approx(6 * 0.001, abs=1e-7)


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


@pytest.mark.slow
def test_a_racy_plan_is_never_a_gain(tmp_path: Path) -> None:
    """fixtures/passes/racy_no_wait.yaml on the seed model in reduce-overhead: mm..abs on stream_1, no wait.
    Every kernel 10 µs: as planned, the replay overlaps stream_1 with the default stream (the race is the
    overlap); the race-free twin orders `sub` after `mm` and `add` after `abs`, as the waits would."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    result = compile_model(CompileRequest.of(REPO / "fixtures/models/seed.py", mode="reduce-overhead",
                                             out_dir=tmp_path / "runs", backend="sim",
                                             passes_file=str(REPO / "fixtures/passes/racy_no_wait.yaml")))
    assert result.error is None, result.error
    times = tmp_path / "t.csv"
    times.write_text("op,us\n*,10\n", encoding="utf-8")
    r = airctl(result.ledger_dir, "--times", times, "--json", "--out", tmp_path / "runs")
    assert r.exit_code == 0, r.output
    pred = json.loads(r.stdout)["predicted"]
    assert pred["racy"] and {f["rule"] for f in pred["races"]} == {"race_cross_stream_without_wait"}
    assert pred["valid_step_us"] > pred["step_us"]  # the apparent gain was the race
    memory = pred["memory"]  # abs reads mm on the default stream with no wait: its block is never released
    assert memory["rule"] == "aclgraph capture pool" and memory["unbounded"] and memory["peak_bytes"] > 0
    shown = airctl(result.ledger_dir, "--times", times, "--out", tmp_path / "runs")
    assert "racy: not a valid plan" in shown.stdout and "race-free plan would take" in shown.stdout
    _report_shows_the_same_step(Path(result.ledger_dir), pred)
    assert airctl(result.ledger_dir, "--times", times, "--fail-on", "race", "--out", tmp_path / "runs").exit_code == 1
    compared = json.loads(airctl(result.ledger_dir, "--times", times, "--compare", "--json", "--out",
                                 tmp_path / "runs").stdout)
    assert compared["racy"] and compared["saved_us"] <= 0.0  # race-free, the plan saves nothing here
    assert compared["memory"]["delta_bytes"] >= 0 and compared["memory"]["grew"]
    # the race-free step is what the plan `passes fix` writes takes, once applied
    runs, fixed = tmp_path / "runs", tmp_path / "fixed.yaml"
    app = build_app()
    r = runner.invoke(app, ["passes", "fix", str(result.ledger_dir), "-o", str(fixed), "--runs", str(runs)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["passes", "apply", str(fixed), "--out", str(runs)])
    assert r.exit_code == 0, r.output
    after = json.loads(airctl("--times", times, "--json", "--out", runs).stdout)["predicted"]
    assert not after["racy"] and after["step_us"] == pytest.approx(pred["valid_step_us"], rel=1e-9)


def _report_shows_the_same_step(ledger: Path, pred: dict) -> None:
    """report.html's Profile tab prints the step `profile --times` printed, and the plan's validity."""
    import re

    from tests.report.browser import dump_dom, find_chromium

    if find_chromium() is None:
        return  # the browser half needs Debian's chromium (scripts/setup.sh installs it)
    dom = dump_dom(ledger / "report.html", "tab=profile")
    step = re.search(r"Predicted NPU step \(replayed; not measured\): ([\d.]+) µs", dom)
    valid = re.search(r"racy: not a valid plan \(2 race\(s\)\); the race-free plan would take ([\d.]+) µs", dom)
    assert step and float(step.group(1)) == pytest.approx(pred["step_us"], abs=0.05)
    assert valid and float(valid.group(1)) == pytest.approx(pred["valid_step_us"], abs=0.05)
    lines = re.findall(r'<polyline[^>]*data-stream="([^"]+)"', dom)  # live bytes per stream (docs/memory.md)
    assert sorted(lines) == sorted(pred["memory"]["live_bytes"]) and "Predicted device memory: peak" in dom


def test_a_failed_run_is_not_predicted(tmp_path: Path) -> None:
    import shutil

    ledger = tmp_path / "ledger"
    shutil.copytree(PROFILES / "seed_ledger", ledger)
    index = json.loads((ledger / "index.json").read_text())
    index["status"], index["error"] = "failed", "pass 'x' matched no node"
    (ledger / "index.json").write_text(json.dumps(index))
    times = tmp_path / "t.csv"
    times.write_text("op,us\n*,10\n", encoding="utf-8")
    r = airctl(ledger, "--times", times, "--compare")
    assert r.exit_code == 2, r.output
    assert "ended failed" in r.output and "matched no node" in r.output


def test_a_second_prediction_keeps_the_first(tmp_path: Path) -> None:
    import shutil

    ledger = tmp_path / "ledger"
    shutil.copytree(PROFILES / "seed_ledger", ledger)
    for us in (10, 20):
        times = tmp_path / f"t{us}.csv"
        times.write_text(f"op,us\n*,{us}\n", encoding="utf-8")
        assert airctl(ledger, "--times", times, "--out", tmp_path).exit_code == 0
    latest = json.loads((ledger / "profile" / "summary.json").read_text())
    first = json.loads((ledger / "profile" / "earlier" / "001" / "summary.json").read_text())
    assert latest["meta"]["times_from"].endswith("t20.csv") and first["meta"]["times_from"].endswith("t10.csv")


def test_rows_that_charge_nothing_are_listed(tmp_path: Path) -> None:
    """A row for a view (it runs no kernel) and a misspelt row are listed, never charged, counted whole."""
    import shutil

    from airctl.predict.prediction import MAX_LISTED

    ledger = tmp_path / "ledger"
    shutil.copytree(PROFILES / "seed_ledger", ledger)
    times = tmp_path / "t.csv"
    misspelt = [f"mmm_{k}" for k in range(MAX_LISTED + 5)]
    times.write_text("op,us\n*,10\n" + "".join(f"{name},3\n" for name in misspelt), encoding="utf-8")
    pred = json.loads(airctl(ledger, "--times", times, "--json", "--out", tmp_path).stdout)["predicted"]
    assert pred["ignored_row_count"] == MAX_LISTED + 5 and len(pred["ignored_rows"]) == MAX_LISTED
    assert pred["ignored_rows"][0] == {"row": "mmm_0", "line": "3", "why": "names no op of the run"}
    shown = airctl(ledger, "--times", times, "--out", tmp_path).stdout
    assert f"ignored rows: {MAX_LISTED + 5}" in shown


def test_a_two_rank_folder_replayed_says_each_note_once_and_writes_no_space_in_its_paths(tmp_path: Path) -> None:
    folder = PROFILES / "npu_two_ranks"
    r = airctl(folder, "--times", folder, "--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert r.output.count("ranks; the times are rank") == 1, r.output
    (written,) = [line for line in r.output.splitlines() if line.startswith("trace: ")]
    assert " " not in written.removeprefix("trace: ").split("  (open")[0], written

"""Real torch_npu profiler folders (fixtures/profiles/real, SOURCES.md there): the replay of the very plan
each folder measured gives back its measured step within 2 %, or names what the folder lacks and how
much of the step that leaves unexplained; and a what-if from real data round-trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "profiles" / "real"
FOLDERS = sorted(str(p.parent.relative_to(REAL)) for p in REAL.glob("*/*/ASCEND_PROFILER_OUTPUT"))
runner = CliRunner()


def predict_own(folder: Path, out: Path) -> dict:
    r = runner.invoke(build_app(), ["profile", str(folder), "--times", str(folder), "--json", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["predicted"]


def test_the_fixtures_are_the_real_folders_sources_md_names() -> None:
    sources = (REAL / "SOURCES.md").read_text(encoding="utf-8")
    assert len(FOLDERS) >= 8
    for folder in FOLDERS:
        assert f"`{folder.split('/')[0]}/" in sources, folder


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_real_folder_replays_its_own_plan_within_2_percent_or_says_why_not(tmp_path: Path, folder: str) -> None:
    pred = predict_own(REAL / folder, tmp_path)
    error = abs(pred["span_us"] - pred["measured_us"]) / pred["measured_us"]
    if error > 0.02:
        assert pred["missing"], f"{folder}: {100 * error:.1f} % off and nothing named missing"
        assert pred["unexplained_pct"] == pytest.approx(100 * error, rel=1e-6)
    else:
        assert pred["unexplained_us"] == 0.0


@pytest.mark.parametrize("folder", ["cnn_ddp_level0/rank0_ascend_pt", "cnn_ddp_level1/rank1_ascend_pt",
                                    "cnn_ddp_db_level1/rank0_ascend_pt"])
def test_folders_with_host_launches_replay_within_2_percent(tmp_path: Path, folder: str) -> None:
    pred = predict_own(REAL / folder, tmp_path)
    assert abs(pred["error_pct"]) <= 2.0, pred["error_pct"]


def test_without_host_launches_the_replay_is_short_and_says_so(tmp_path: Path) -> None:
    pred = predict_own(REAL / "qwen3_pp2_dp2_level2" / "rank_0_ascend_pt", tmp_path)
    assert pred["unexplained_pct"] > 2.0
    assert any("no host launch times" in m for m in pred["missing"])


def test_launches_come_from_the_trace_and_from_the_db_export() -> None:
    from airctl.profile.analyze import analyze

    for folder in ("cnn_ddp_level1/rank0_ascend_pt", "cnn_ddp_db_level1/rank0_ascend_pt"):
        timeline = analyze(REAL / folder).ranks[0].timeline
        assert timeline.meta["launches"] >= 180, folder
        launched = [(e, s) for e, s in zip(timeline.events, timeline.facts.launch_s, strict=True) if s is not None]
        late = [e.node for e, s in launched if s > e.start_s + 1e-9]
        assert len(late) <= 0.15 * len(launched), late  # host and device clocks agree to a few µs


def test_what_if_round_trip_from_real_data() -> None:
    """From a real folder with several streams: predict the same tasks on one stream, then the measured
    plan from that single-stream prediction's kernel times: the measured step again, within 2 %."""
    from airctl.pipeline.predict import single_stream
    from airctl.predict.host import program_order
    from airctl.predict.plan import plan_from_timeline
    from airctl.predict.profiled import dispatch_gap_us, event_latency_us, profile_timeline
    from airctl.predict.step import Conditions, price
    from airctl.profile import events as ev

    timeline, _ = profile_timeline(REAL / "cnn_ddp_level1" / "rank0_ascend_pt", None)
    step = ev.representative_step(timeline)
    measured = plan_from_timeline(timeline, step)
    plan, durations = measured
    assert len(plan.streams()) >= 3
    cond = Conditions(gap_us=dispatch_gap_us(timeline), latency_us=event_latency_us(timeline))
    order = program_order(plan)
    one = single_stream(plan)
    one.tasks = [one.tasks[i] for i in order]  # one stream runs in the host's order
    for k, t in enumerate(one.tasks):
        t.index = k
    back = {t.name: i for i, t in enumerate(one.tasks)}
    for t in one.tasks:
        t.after = [(back[plan.tasks[j].name], kind) for j, kind in t.after]
    single = price(one, [durations[i] for i in order], [None] * len(order), cond).replayed
    from_single = {e.node: (e.end_s - e.start_s) * 1e6 for e in single.timeline.events}
    again = price(plan, [from_single.get(t.name, d) for t, d in zip(plan.tasks, durations, strict=True)],
                  [None] * len(durations), cond).step_us
    a, b = ev.span(ev.step_events(timeline, step))
    assert again == pytest.approx((b - a) * 1e6, rel=0.02)
    assert single.span_us >= again  # one stream is never faster than the plan that overlapped


def test_the_measured_memory_peak_is_read_beside_the_prediction(tmp_path: Path) -> None:
    """memory_record.csv's PTA+GE peak (1 322 299 392 bytes at its line 905, computed by hand from the file)."""
    pred = predict_own(REAL / "cnn_ddp_level1" / "rank0_ascend_pt", tmp_path)
    assert pred["memory"]["measured"]["peak_allocated_bytes"] == 1322299392

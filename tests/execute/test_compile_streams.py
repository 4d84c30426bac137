"""The executor inside real TorchAir compiles (sim): races in the ledger, deadlock pass files, profiling."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import MODELS, REPO

PASSES = REPO / "fixtures" / "passes"


def _compile(model: str, passes: Path, mode: str, out: Path):
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.pipeline.pass_hooks import build_hooks

    hooks = build_hooks(passes)
    return compile_model(CompileRequest.of(MODELS / f"{model}.py", mode=mode, out_dir=out, backend="sim",
                                        pre_pass=hooks.pre_pass, post_pass=hooks.post_pass, passes_file=str(passes),
                                        report=False))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["reduce-overhead", "max-autotune"])
def test_racy_and_correct_plans_match_eager_and_only_the_racy_one_races(mode: str, tmp_path: Path) -> None:
    racy = _compile("seed", PASSES / "racy_no_wait.yaml", mode, tmp_path)
    ok = _compile("seed", PASSES / "ordered_wait.yaml", mode, tmp_path)
    for result in (racy, ok):
        assert result.error is None, result.error
        assert result.execution.matches_eager
    assert ok.index.to_json()["execution"]["races"] == []
    races = racy.index.to_json()["execution"]["races"]
    if mode == "max-autotune":
        assert races == []  # GE synchronises the cross-stream data edges itself
        return
    by_reader = {r["reader"]: r for r in races}
    assert set(by_reader) == {"add", "sub"}
    add = by_reader["add"]
    assert add["producer"] == "abs_1" and (add["reader_stream"], add["producer_stream"]) == ("default", "stream_1")
    assert add["reader_source"].endswith("seed.py:10") and add["producer_source"].endswith("seed.py:9")
    assert by_reader["sub"]["producer"] == "mm" and by_reader["sub"]["reader_source"].endswith("seed.py:11")


@pytest.mark.slow
def test_deadlocking_pass_file_is_caught_by_the_verifier_not_a_hang(tmp_path: Path) -> None:
    t0 = time.perf_counter()
    result = _compile("seed", PASSES / "deadlock.yaml", "reduce-overhead", tmp_path)
    assert time.perf_counter() - t0 < 60
    assert result.error is not None and result.index.to_json()["status"] == "failed"
    msg = result.error.message
    assert "deadlock_cycle" in msg and "wait_default" in msg and "record_default" in msg
    assert result.error.node == "wait_default" and result.error.hint
    assert "deadlock_cycle" in result.index.to_json()["first_stage_with_finding"]


@pytest.mark.slow
def test_profile_model_records_both_streams_each_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from airctl.execute.timeline import Timeline
    from airctl.pipeline.profile import ProfileRequest, profile_model
    from airctl.pipeline.target import Target

    monkeypatch.setenv("AIRCTL_TWO_CHAINS_N", "64")
    target = Target(MODELS / "two_chains.py", backend="sim", passes_file=REPO / "passes" / "two_chains.yaml")
    run = profile_model(ProfileRequest(target, steps=2, warmup=1, out_dir=tmp_path))
    assert run.error is None and run.matches_eager and run.races == []
    assert len(run.step_seconds) == 2
    (tl,) = run.timelines
    assert tl.streams() == ["default", "stream_1"] and tl.steps == 2 and len(tl.step_seconds) == 2
    assert tl.meta["graph_id"] == "1-inference"
    per_step = [sum(1 for e in tl.events if e.step == k and e.op == "aten.mm.default") for k in range(2)]
    assert per_step == [20, 20]
    assert {e.stream for e in tl.events if e.op == "aten.mm.default"} == {"default", "stream_1"}
    assert [(s.kind, s.src_stream, s.dst_stream) for s in tl.syncs if s.step == 0] == [
        ("record_wait", "stream_1", "default")]
    saved = Timeline.from_json(json.loads((run.ledger_dir / "profile" / f"timeline_{tl.graph}.json").read_text()))
    assert saved.events == tl.events

"""airctl/profile/analyze.py on hand-written Ascend-layout folders (fixtures/profiles), malformed
ones, and what the sim's torch_npu.profiler writes. The realistic folders: test_npu_folders.py;
each reader: tests/profile/ascend/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from airctl.errors import AirctlError
from airctl.profile.analyze import analyze
from airctl.profile.ascend.folders import find_rank_folders
from airctl.profile.summary import summarize

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "fixtures" / "profiles"
FOLDER = "devhost_4242_20260101120000000_ascend_pt"
US = 1e-6


def _check_numbers(timeline) -> None:  # noqa: ANN001 - see fixtures/profiles/make_profiles.py for the data
    s = summarize([timeline])
    busy = {x.stream: x.busy_s for x in s.streams}
    assert busy == pytest.approx({"2": 40 * US, "7": 50 * US})
    assert s.span_s == pytest.approx(67 * US) and s.overlap_s == pytest.approx(25 * US)
    assert [p.node for p in s.critical_path] == ["MatMul", "Abs", "EVENT_RECORD", "EVENT_WAIT", "Sub"]
    assert s.critical_path[3].via == "sync:event"
    assert s.critical_path_s == pytest.approx(65 * US)
    assert timeline.steps == 2 and sorted({e.step for e in timeline.events}) == [1, 2]


def test_kernel_details_with_stream_ids() -> None:
    t = analyze(PROFILES / "npu_two_streams").ranks[0].timeline
    assert t.mode == "npu-profile" and t.meta["tasks_from"] == "kernel_details.csv" and t.meta["tasks"] == 14
    assert len(t.syncs) == 2 and t.syncs[0].src == "EVENT_RECORD" and t.syncs[0].dst_stream == "2"
    _check_numbers(t)


def test_trace_only_reads_the_ascend_hardware_lanes() -> None:
    t = analyze(PROFILES / "npu_trace_only" / FOLDER / "ASCEND_PROFILER_OUTPUT").ranks[0].timeline
    assert t.meta["tasks_from"] == "trace_view.json"
    assert {e.op for e in t.events} >= {"MatMul", "EVENT_WAIT"}
    _check_numbers(t)


def test_malformed_csv_names_the_file_and_the_missing_column() -> None:
    with pytest.raises(AirctlError) as info:
        analyze(PROFILES / "bad_kernels_csv")
    e = info.value
    assert e.file.endswith("kernel_details.csv") and e.line == 1
    assert "Duration(us)" in e.message and e.hint


def test_truncated_trace_names_the_file_and_line() -> None:
    with pytest.raises(AirctlError) as info:
        analyze(PROFILES / "bad_trace_json")
    assert info.value.file.endswith("trace_view.json") and info.value.line and "not valid JSON" in info.value.message


def test_bad_number_names_the_row(tmp_path: Path) -> None:
    shutil.copytree(PROFILES / "npu_two_streams", tmp_path / "p")
    csv_path = tmp_path / "p" / FOLDER / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = csv_path.read_text().splitlines()
    lines[3] = lines[3].replace("AI_CORE,", "AI_CORE,soon")
    csv_path.write_text("\n".join(lines) + "\n")
    with pytest.raises(AirctlError, match="Start Time") as info:
        analyze(tmp_path / "p")
    assert info.value.line == 4


def test_not_a_profiler_folder(tmp_path: Path) -> None:
    with pytest.raises(AirctlError, match="no ASCEND_PROFILER_OUTPUT"):
        find_rank_folders(tmp_path)
    with pytest.raises(AirctlError, match="no such folder"):
        find_rank_folders(tmp_path / "missing")
    (tmp_path / "x" / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    with pytest.raises(AirctlError, match="neither trace_view.json nor kernel_details.csv"):
        analyze(tmp_path / "x")


def test_several_folders_of_one_rank_take_the_newest_by_stamp(tmp_path: Path) -> None:
    """Schedule cycles leave one folder each; the newest by its time stamp wins, not by name."""
    for host, stamp in (("zeta", "20260101120000000"), ("alpha", "20260101130000000")):
        shutil.copytree(PROFILES / "npu_two_streams" / FOLDER, tmp_path / f"{host}_1_{stamp}_ascend_pt")
    (folder,), notes = find_rank_folders(tmp_path)
    assert folder.path.name == "alpha_1_20260101130000000_ascend_pt" and "2 profiler folders of rank 0" in notes[0]
    assert analyze(tmp_path).notes == notes


def test_ledger_links_ge_task_names_to_fx_nodes() -> None:
    t = analyze(PROFILES / "npu_two_streams", ledger=PROFILES / "seed_ledger").ranks[0].timeline
    by_node = {e.node: e for e in t.events if e.step == 1}
    assert by_node["mm"].op == "aten.mm.default" and by_node["mm"].source == "fixtures/models/seed.py:8"
    assert by_node["abs_1"].stream == "7"
    assert "Mul" in by_node  # no GE op of that name in the ledger: kept as the task name
    assert t.meta["links"]["linked"] == 8 and t.meta["links"]["unlinked"] == 6


def test_the_sims_profiler_output(tmp_path: Path) -> None:
    """What airctl/sim/torch_npu/profiler.py writes for a script run under `airctl run`."""
    import torch

    from airctl.sim.torch_npu import profiler as P  # noqa: N812

    with P.profile(activities=[P.ProfilerActivity.CPU], schedule=P.schedule(wait=0, active=2, repeat=1),
                   on_trace_ready=P.tensorboard_trace_handler(str(tmp_path))) as prof:
        for _ in range(2):
            x = torch.randn(8, 8)
            torch.mm(x, x).abs()
            prof.step()
    t = analyze(tmp_path).ranks[0].timeline
    assert t.meta["simulated"] is True and t.meta["tasks_from"] == "kernel_details.csv"
    assert [e.node for e in t.events if e.step == 0] == ["aten::randn", "aten::mm", "aten::abs"]
    assert len(t.streams()) == 1 and t.steps == 2
    assert t.events[0].start_s == 0.0
    s = summarize([t])
    assert s.overlap_s == 0 and 0 < s.streams[0].busy_s <= s.span_s

"""``airctl profile analyze`` on realistic torch_npu folders (fixtures/profiles/npu_*, written by
make_profiles.py from the headers torch_npu 2.13 + CANN write): the issue's acceptance points.

The truth each test compares with is computed here, independently, from the files themselves
(Decimal arithmetic on the CSV's text; the profiler's own step_trace_time.csv).
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

from airctl.profile.analyze import analyze
from airctl.profile.ranks import MultiRankSummary, summarize_analysis
from airctl.profile.summary import ProfileSummary

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "fixtures" / "profiles"
US = Decimal("0.001")  # the acceptance tolerance, µs


def _only(path: Path, pattern: str) -> Path:
    (found,) = path.glob(pattern)
    return found


def csv_truth(folder: Path, step: int) -> dict[str, tuple[int, Decimal, Decimal]]:
    """Per numbered Stream ID of one step: (ops, busy µs as the union of [start, start+dur), the same
    summed in float64 absolute µs the way the issue's bug did), from kernel_details.csv's own text."""
    rows = defaultdict(list)
    with open(_only(folder, "*/ASCEND_PROFILER_OUTPUT/kernel_details.csv"), newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["Stream ID"] != "N/A" and int(row["Step Id"]) == step:
                rows[row["Stream ID"]].append((Decimal(row["Start Time(us)"].strip()),
                                               Decimal(row["Duration(us)"].strip())))
    out = {}
    for stream, spans in rows.items():
        busy = Decimal(0)
        float_busy = 0.0
        end = fend = None
        for start, dur in sorted(spans):
            lo, hi = (start if end is None else max(start, end)), start + dur
            busy += max(hi - lo, Decimal(0))
            end = hi if end is None else max(end, hi)
            fs, fd = float(start), float(dur)
            flo = fs if fend is None else max(fs, fend)
            float_busy += max(fs + fd - flo, 0.0)
            fend = fs + fd if fend is None else max(fend, fs + fd)
        out[stream] = (len(spans), busy, Decimal(repr(float_busy)))
    return out


def single(folder: str) -> ProfileSummary:
    summary = summarize_analysis(analyze(PROFILES / folder))
    assert isinstance(summary, ProfileSummary)
    return summary


# -- acceptance 1: Level1, exact per-stream numbers, HCCL on its hardware stream --------------------
def test_level1_streams_equal_the_csv_to_a_nanosecond() -> None:
    s = single("npu_level1")
    step = s.graphs[0].step
    truth = csv_truth(PROFILES / "npu_level1", step)
    got = {x.stream: x for x in s.streams}
    assert "N/A" not in got and set(truth) <= set(got)
    for stream, (ops, busy, _float_busy) in truth.items():
        assert got[stream].ops == ops
        assert abs(Decimal(repr(got[stream].busy_s)) * 10**6 - busy) < US, stream
    # the test has teeth: float64 absolute µs (the old arithmetic) misses by more than the tolerance
    assert any(abs(float_busy - busy) > US for _ops, busy, float_busy in truth.values())
    # the HCCL rows (Stream ID N/A) sit on hardware stream 8 from trace_view.json, marked communication
    assert got["8"].ops == got["8"].comm_ops == 2
    assert "Plane" in s.npu["streams_from"]["communication"]
    assert s.npu["level"] == "Level1" and s.npu["columns"]["kernel_details.csv"]["missing"] == []


def test_the_db_export_gives_the_same_numbers_as_the_text_export() -> None:
    text, db = single("npu_level1"), single("npu_db")
    assert db.npu["tasks_from"] == "ascend_pytorch_profiler_0.db"
    assert [(x.stream, x.ops, x.comm_ops, round(x.busy_s, 12)) for x in db.streams] == \
        [(x.stream, x.ops, x.comm_ops, round(x.busy_s, 12)) for x in text.streams]
    assert db.npu["steps"] == text.npu["steps"] and db.npu["check"]["against"] == "analysis.db StepTraceTime"


# -- acceptance 2: Level0 (no Stream ID): streams from the trace, overlap within 5% --------------------
def test_level0_takes_streams_from_the_trace_and_matches_step_trace_time() -> None:
    s0, s1 = single("npu_level0"), single("npu_level1")
    assert s0.npu["columns"]["kernel_details.csv"]["missing"] == ["Stream ID"]
    assert s0.npu["streams_from"]["compute"].startswith("trace_view.json Ascend Hardware lanes")
    assert [(x.stream, x.ops, x.comm_ops) for x in s0.streams] == [(x.stream, x.ops, x.comm_ops) for x in s1.streams]
    rows = list(csv.DictReader(open(_only(PROFILES / "npu_level0", "*/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"),
                                    newline="", encoding="utf-8")))
    theirs = {int(r["Step"]): float(r["Overlapped"]) for r in rows}
    ours = {st["step"]: st["overlapped_us"] for st in s0.npu["steps"]}
    assert ours.keys() == theirs.keys() and all(theirs[k] > 0 for k in theirs)
    for k in theirs:
        assert ours[k] == pytest.approx(theirs[k], rel=0.05)
    ops = {o.op for o in s0.top_ops}
    assert "N/A" not in ops and "aclnnMatmul_MatMulCommon_MatMulV2" in ops and "hcom_allReduce_" in ops


# -- acceptance 3: two ranks, one result, one trace ---------------------------------------------------
def test_two_ranks_one_result_and_a_trace_process_per_rank(tmp_path: Path) -> None:
    from airctl.pipeline.profile import analyze_profile_folder

    outcome = analyze_profile_folder(PROFILES / "npu_two_ranks", out=tmp_path)
    data = outcome.to_json()
    assert set(data) == {"ranks", "cross_rank", "trace", "meta"}
    assert [r["rank"] for r in data["ranks"]] == [0, 1]
    # ranks come from profiler_info's rank_id: rank 0 is the pid-3002 folder, whose name sorts second
    assert "devhost_3002_" in data["ranks"][0]["npu"]["folder"]
    assert {"streams", "overlap_s", "critical_path", "top_ops", "npu"} <= set(data["ranks"][0])
    cross = data["cross_rank"]
    assert [s["step"] for s in cross["steps"]] == [3, 4, 5] and cross["late_rank"] == 1
    step4 = next(s for s in cross["steps"] if s["step"] == 4)
    waits = {p["rank"]: p["wait_us"] for p in step4["per_rank"]}
    assert step4["late_rank"] == 1 and waits[1] == 0 and waits[0] > 300  # rank 0 waits for the slow rank 1
    trace = json.loads(Path(data["trace"]).read_text())
    names = [e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "process_name"]
    assert names == ["rank 0 (npu-profile)", "rank 1 (npu-profile)"]
    assert {e["pid"] for e in trace["traceEvents"] if e.get("ph") == "X"} == {1, 2}
    comm = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e["args"].get("kind") == "communication"]
    assert len(comm) == 12 and {e["args"]["op"] for e in comm} == {"hcom_allReduce_"}


def test_the_single_rank_json_keeps_its_shape() -> None:
    data = single("npu_level1").to_json()
    assert set(data) == {"streams", "overlap_s", "span_s", "step_s", "step_seconds", "critical_path",
                         "critical_path_s", "top_ops", "top_nodes", "races", "graphs", "trace", "meta", "npu"}


# -- acceptance 4 (the test half): the step breakdown matches step_trace_time.csv within 1% ----------
@pytest.mark.parametrize("folder", ["npu_level1", "npu_level0", "npu_db", "npu_two_ranks"])
def test_step_breakdown_matches_the_profilers_own_within_1pct(folder: str) -> None:
    summary = summarize_analysis(analyze(PROFILES / folder))
    ranks = [r.summary for r in summary.ranks] if isinstance(summary, MultiRankSummary) else [summary]
    for s in ranks:
        check = s.npu["check"]
        assert len(check["steps"]) == 3 and check["unmatched_steps"] == []
        for metric in ("computing", "communication", "overlapped", "communication_not_overlapped", "free", "stage"):
            assert check["max_diff_pct"][metric] <= 1.0, (metric, check["max_diff_pct"])
        assert all(st["communication"]["profiler_us"] > 0 and st["free"]["profiler_us"] > 0
                   for st in check["steps"])


def test_the_critical_path_goes_through_communication() -> None:
    s = single("npu_level1")
    path = s.critical_path
    assert any(p.stream == "8" and p.op == "hcom_allReduce_" for p in path)
    assert sum(p.work_s for p in path) <= s.span_s + 1e-12


# -- acceptance 4 (the docs half): docs/profile.md names every column and table the readers use -----
def test_docs_list_the_columns_read_and_the_definitions() -> None:
    from airctl.profile.ascend import db, kernels, step_trace
    from airctl.profile.ascend.breakdown import METRIC_COLUMN

    doc = (REPO / "docs" / "profile.md").read_text(encoding="utf-8")
    names = [n for aliases in kernels.WANTED.values() for n in aliases]
    names += [c for table, cols in db.NEEDED.items() for c in (table, *cols)] + list(step_trace.METRICS)
    missing = [n for n in names if f"`{n}`" not in doc and f"| {n} |" not in doc and f" {n} " not in doc]
    assert missing == []
    for ours, theirs in METRIC_COLUMN.items():
        assert f"`{ours}_us` | {theirs} |" in doc
    for level in ("Level0", "Level1/2", "Level1/Level2"):
        assert level in doc


def test_the_fixtures_keep_torch_npus_bytes() -> None:
    """CRLF lines, the TAB after each start time (quoted at Level1, bare at Level0), shapes in quotes."""
    l1 = _only(PROFILES / "npu_level1", "*/ASCEND_PROFILER_OUTPUT/kernel_details.csv").read_bytes()
    l0 = _only(PROFILES / "npu_level0", "*/ASCEND_PROFILER_OUTPUT/kernel_details.csv").read_bytes()
    assert l1.count(b"\r\n") == l1.count(b"\n") > 100 and b'\t",' in l1 and b'"""4096,2048"""' in l1
    assert b"\t," in l0 and b'\t",' not in l0 and b"Stream ID" not in l0.split(b"\r\n")[0]

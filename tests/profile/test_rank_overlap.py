"""Per-rank communication, compute and overlap, and the one trace with a process per rank."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airctl.execute.timeline import OpEvent, Race, Timeline
from airctl.profile.chrome_trace import write_chrome_trace
from airctl.profile.rank_overlap import is_comm, merged, rank_profile

MS = 1e-3
AR, WAIT, MM = "_c10d_functional.all_reduce.default", "_c10d_functional.wait_tensor.default", "aten.addmm.default"


def one_stream() -> Timeline:
    """No pass: the layers and the all-reduces take turns on the default stream."""
    return Timeline("graph_1", "max-autotune", [
        OpEvent("addmm", MM, "default", 0.0, 2 * MS), OpEvent("all_reduce", AR, "default", 2 * MS, 2.1 * MS),
        OpEvent("wait_tensor", WAIT, "default", 2.1 * MS, 5 * MS), OpEvent("addmm_1", MM, "default", 5 * MS, 7 * MS)],
        step_seconds=[7 * MS])


def comm_stream() -> Timeline:
    """passes/comm_stream.yaml: the all-reduce and its wait on `comm` while the next layer computes."""
    return Timeline("graph_1", "max-autotune", [
        OpEvent("addmm", MM, "default", 0.0, 2 * MS),
        OpEvent("record", "air.record.default", "default", 2 * MS, 2 * MS),
        OpEvent("all_reduce", AR, "comm", 2 * MS, 2.1 * MS), OpEvent("wait_tensor", WAIT, "comm", 2.1 * MS, 5 * MS),
        OpEvent("addmm_1", MM, "default", 2 * MS, 4 * MS)], step_seconds=[5 * MS],
        races=[Race("stack", "wait_tensor", "default", "comm")])


def test_one_stream_cannot_overlap() -> None:
    p = rank_profile(0, [one_stream()])
    assert (p.comm_s, p.compute_s, p.overlap_s, p.overlap_pct) == pytest.approx((3 * MS, 4 * MS, 0.0, 0.0))
    assert p.comm_ops == 1 and p.streams == pytest.approx({"default": 7 * MS})


def test_a_comm_stream_hides_communication_under_the_next_layer() -> None:
    p = rank_profile(1, [comm_stream()])
    assert p.comm_s == pytest.approx(3 * MS) and p.compute_s == pytest.approx(4 * MS)
    assert p.overlap_s == pytest.approx(2 * MS) and p.overlap_pct == pytest.approx(200 / 3)
    assert p.races == ["stack (stream default) reads wait_tensor (stream comm) with no ordering"]
    assert p.to_json()["overlap_pct"] == pytest.approx(200 / 3)


def test_comm_ops_are_collectives_and_their_waits() -> None:
    assert is_comm(AR) and is_comm(WAIT) and is_comm("HcomAllReduce") and not is_comm(MM)


def test_the_trace_has_a_process_per_rank_and_a_lane_per_stream(tmp_path: Path) -> None:
    second = Timeline("graph_2", "max-autotune", [OpEvent("mul", "aten.mul.Tensor", "default", 5 * MS, 6 * MS)],
                      step_seconds=[1 * MS])
    write_chrome_trace(tmp_path / "trace.json", [merged(0, [one_stream()]), merged(1, [comm_stream(), second])],
                       {"ranks": [0, 1]})  # as `profile --nproc` writes it
    trace = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    processes = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    assert processes == {1: "rank 0 (max-autotune)", 2: "rank 1 (max-autotune)"}
    lanes = {(e["pid"], e["args"]["name"]) for e in meta if e["name"] == "thread_name"}
    assert lanes == {(1, "stream default"), (2, "stream graph_1:default"), (2, "stream graph_1:comm"),
                     (2, "stream graph_2:default")}  # a rank with several graphs: one lane per graph and stream
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == 2]
    assert {e["name"] for e in ops} == {"addmm", "record", "all_reduce", "wait_tensor", "addmm_1", "mul"}

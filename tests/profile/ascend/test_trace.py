"""airctl/profile/ascend/trace.py and placement.py: trace_view.json lanes, and streams for the rows
that lack one (Level0, HCCL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airctl.profile.ascend.model import Issues, ProfileReadError, Task
from airctl.profile.ascend.placement import markers_from_trace, place_streams
from airctl.profile.ascend.trace import read_trace

HW, COMM = 3550586784, 3550586848  # msprof pids exceed 2**31


def meta(pid: object, what: str, name: str, tid: object = 0) -> dict[str, object]:
    return {"name": what, "pid": pid, "tid": tid, "ph": "M", "args": {"name": name}}


def x(pid: object, tid: object, name: str, ts: str, dur: float, **args: object) -> dict[str, object]:
    return {"name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "ph": "X", "args": args}


EVENTS = [
    meta(7, "process_name", "Python"), x(7, 7, "ProfilerStep#4", "1736413971558000.000", 900.5),
    meta(HW, "process_name", "Ascend Hardware"),
    {"name": "process_labels", "pid": HW, "tid": 0, "ph": "M", "args": {"labels": "NPU 3"}},
    meta(HW, "thread_name", "Stream 2", 2), meta(HW, "thread_name", "Stream 8", 8),
    x(HW, 2, "MatMulV2", "1736413971558972.912", 185.504, **{"Task Type": "AI_CORE"}),
    x(HW, 2, "Add", "1736413971558972.912", 1.0, **{"Task Type": "AI_VECTOR_CORE"}),
    x(HW, 2, "EVENT_RECORD", "1736413971559200.000", 0.3, **{"Task Type": "EVENT_RECORD_SQE"}),
    x(HW, 8, "Notify_Wait", "1736413971560000.100", 50.0, **{"Task Type": "NOTIFY_WAIT_SQE"}),
    x(HW, 8, "Memcpy", "1736413971560050.100", 45.1, **{"Task Type": "SDMA_SQE"}),
    x(HW, 11, "Cast", "1736413971561000.000", 2.0, **{"Physic Stream Id": 11}),  # no thread_name: from args
    meta(COMM, "process_name", "Communication"),
    meta(COMM, "thread_name", "Group 10.0.0.1%enp_60000_0_1 Communication", 0), meta(COMM, "thread_name", "Plane 0", 1),
    x(COMM, 0, "hcom_allReduce__868_0_1", "1736413971560000.100", 95.2, rank_size=8),
    x(COMM, 1, "Memcpy", "1736413971560050.100", 45.1, **{"stream id": 8}),
]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "trace_view.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_lanes_exact_times_and_steps(tmp_path: Path) -> None:
    view = read_trace(write(tmp_path, json.dumps(EVENTS)), Issues())
    assert [(s.lane, s.name, s.start_ns, s.dur_ns) for s in view.hardware][:2] == [
        ("2", "MatMulV2", 1736413971558972912, 185504), ("2", "Add", 1736413971558972912, 1000)]
    assert {s.lane for s in view.hardware} == {"2", "8", "11"} and view.device == 3
    assert [s.name for s in view.comm_ops] == ["hcom_allReduce__868_0_1"]
    assert [s.args["stream id"] for s in view.plane_tasks] == [8]
    assert view.host_steps == {4: (1736413971558000000, 1736413971558900500)}


def test_torch_npus_trailing_comma_and_the_wrapper_are_read(tmp_path: Path) -> None:
    text = json.dumps(EVENTS)[:-1] + ",]"
    assert len(read_trace(write(tmp_path, text), Issues()).hardware) == 6
    assert len(read_trace(write(tmp_path, json.dumps({"traceEvents": EVENTS})), Issues()).hardware) == 6


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    (json.dumps(EVENTS)[:500], "not valid JSON"),
    ('{"a": 1}', "neither a list of trace events"),
])
def test_bad_json_is_a_clean_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ProfileReadError, match=message) as info:
        read_trace(write(tmp_path, text), Issues())
    assert info.value.file.endswith("trace_view.json")


def test_bad_times_are_left_out_with_the_event_number(tmp_path: Path) -> None:
    events = [*EVENTS, x(HW, 2, "Neg", "1736413971561000.000", -4.0), x(HW, 2, "Bad", "soon", 1.0),
              x(HW, 2, "Far", "1e30", 1.0)]
    issues = Issues()
    view = read_trace(write(tmp_path, json.dumps(events)), issues)
    assert {"Neg", "Bad", "Far"}.isdisjoint({s.name for s in view.hardware}) and len(view.hardware) == 6
    path = tmp_path / "trace_view.json"
    assert issues.warnings == [f"{path}: event 17: event 'Neg' left out: dur -4.0 µs is negative",
                               f"{path}: event 18: event 'Bad' left out: ts/dur is not a number ('soon')",
                               f"{path}: event 'Far' left out: ts 1e+30 µs is not near the other events'"]


def task(name: str, start: str, dur: str, comm: bool = False) -> Task:
    from airctl.profile.ascend.times import us_to_ns

    return Task(name, name, None, us_to_ns(start), us_to_ns(dur), 1, comm=comm)


def test_level0_rows_go_on_the_lane_with_their_start_and_name(tmp_path: Path) -> None:
    view = read_trace(write(tmp_path, json.dumps(EVENTS)), Issues())
    tasks = [task("Add", "1736413971558972.912", "1.0"), task("MatMulV2", "1736413971558972.912", "185.504"),
             task("Cast", "1736413971561000.000", "2.0"), task("Gone", "1736413971569999.000", "2.0")]
    issues = Issues()
    said = place_streams(tasks, view, issues, "kernel_details.csv")
    assert [t.stream for t in tasks] == ["2", "2", "11", "unplaced"]
    assert said["compute"].startswith("trace_view.json Ascend Hardware lanes") and "1 on lane 'unplaced'" in \
        said["compute"]
    assert "1 compute task(s) could not be placed" in issues.warnings[0]


@pytest.mark.parametrize("drop, how", [
    ((), "by Plane tasks' stream id"),  # Level1: the op's tasks on the Plane threads say their stream
    (("Memcpy",), "by the tasks inside the op's time window"),  # Level0: no planes; the lane busy in the window
])
def test_hccl_rows_go_on_their_hardware_stream(tmp_path: Path, drop: tuple[str, ...], how: str) -> None:
    events = [e for e in EVENTS if not (e["pid"] == COMM and e["name"] in drop)]
    view = read_trace(write(tmp_path, json.dumps(events)), Issues())
    op = task("hcom_allReduce__868_0_1", "1736413971560000.100", "95.2", comm=True)
    said = place_streams([op], view, Issues(), "kernel_details.csv")
    assert op.stream == "8" and how in said["communication"]


def test_hccl_rows_without_a_trace_get_a_named_lane_and_a_warning() -> None:
    op = task("hcom_allReduce__868_0_1", "1736413971560000.100", "95.2", comm=True)
    issues = Issues()
    place_streams([op], None, issues, "kernel_details.csv")
    assert op.stream == "hccl" and "no trace_view.json" in issues.warnings[0]


def test_event_tasks_become_markers(tmp_path: Path) -> None:
    view = read_trace(write(tmp_path, json.dumps(EVENTS)), Issues())
    (m,) = markers_from_trace(view, [])
    assert (m.name, m.type, m.stream, m.is_marker) == ("EVENT_RECORD", "EVENT_RECORD", "2", True)

"""airctl/profile/summary.py and events.py: busy/idle/overlap math, the critical path, top ops."""

from __future__ import annotations

import pytest

from airctl.execute.timeline import OpEvent, SyncEdge, Timeline
from airctl.profile import events as ev
from airctl.profile.summary import critical_path, summarize

from .timelines import MS, seed_two_streams, single_stream, with_race


def test_union_and_overlap() -> None:
    assert ev.union([(3, 4), (0, 2), (1, 2.5)]) == [(0, 2.5), (3, 4)]
    assert ev.overlap({"a": [(0, 4)], "b": [(2, 6)]}) == 2
    assert ev.overlap({"a": [(0, 2)], "b": [(2, 4)]}) == 0  # touching is not overlapping
    assert ev.overlap({"a": [(0, 1), (0.5, 3)], "b": [(1, 2)]}) == 1  # one stream's own overlap counts once
    assert ev.overlap({"a": [(0, 4)], "b": [(1, 3)], "c": [(2, 5)]}, at_least=3) == 1


def test_busy_idle_overlap_of_the_seed_example() -> None:
    s = summarize([seed_two_streams()])
    rows = {x.stream: x for x in s.streams}
    assert [x.stream for x in s.streams] == ["default", "stream_1"]
    assert rows["default"].busy_s == pytest.approx(1.9 * MS)  # add + sub; the wait is blocked time
    assert rows["default"].idle_s == pytest.approx(2.1 * MS)
    assert rows["stream_1"].busy_s == pytest.approx(3 * MS)
    assert rows["stream_1"].busy_pct == pytest.approx(75.0)
    assert rows["default"].ops == 2 and rows["stream_1"].ops == 2
    assert rows["default"].largest_gap_s == pytest.approx(1.6 * MS)
    assert s.span_s == pytest.approx(4 * MS)
    assert s.overlap_s == pytest.approx(1 * MS)  # add (0.5-1.5) beside mm
    assert s.step_s == pytest.approx(4.2 * MS)


def test_critical_path_goes_through_the_record_wait_edge() -> None:
    path = critical_path(seed_two_streams(), 0)
    assert [(p.node, p.via) for p in path] == [
        ("mm", "start"), ("abs_1", "program"), ("record", "program"), ("wait", "sync:record_wait"),
        ("sub", "program")]
    assert sum(p.work_s for p in path) == pytest.approx(3.9 * MS)
    assert path[3].work_s == 0 and path[3].dur_s == pytest.approx(1.6 * MS)  # blocking is not work


def test_without_the_sync_edge_the_path_stays_on_its_stream() -> None:
    t = seed_two_streams()
    t.syncs = []
    assert [p.node for p in critical_path(t, 0)] == ["add", "wait", "sub"]


def test_sync_edge_resolved_by_time_when_names_are_not_events() -> None:
    """A fork from the graph's inputs has no op: the edge binds to ops on the two streams by time."""
    t = Timeline("g", "reduce-overhead", [
        OpEvent("a", "aten.mm.default", "default", 0.0, 1.0),
        OpEvent("b", "aten.abs.default", "side", 1.0, 1.5),
        OpEvent("c", "aten.neg.default", "default", 1.0, 1.2)],
        syncs=[SyncEdge("fork", "graph-input", "side-start", "default", "side", 1.0)])
    assert [(p.node, p.via) for p in critical_path(t, 0)] == [("a", "start"), ("b", "sync:fork")]


def test_numbers_come_from_the_median_step() -> None:
    t = seed_two_streams(steps=3, skew=1 * MS)  # spans 4, 5, 6 ms
    t.events = [e for e in t.events if e.step != 0] + [e for e in t.events if e.step == 0]  # order is irrelevant
    g = summarize([t]).graphs[0]
    assert g.steps == 3 and g.step == 1
    assert g.span_s == pytest.approx(5 * MS)
    assert g.streams[1].busy_s == pytest.approx(4 * MS)  # stream_1 in step 1
    assert g.critical_path_s == pytest.approx(4.9 * MS)


def test_a_slow_first_step_does_not_speak_for_the_run() -> None:
    t = seed_two_streams(steps=4)
    for e in t.events:
        if e.step == 0:
            e.start_s, e.end_s = e.start_s * 50, e.end_s * 50
    assert summarize([t]).span_s == pytest.approx(4 * MS)


def test_top_ops_skip_markers_and_are_per_step() -> None:
    s = summarize([seed_two_streams(steps=2)])
    assert [o.op for o in s.top_ops] == ["aten.mm.default", "aten.abs.default", "aten.add.Tensor", "aten.sub.Tensor"]
    mm = s.top_ops[0]
    assert mm.count == 1 and mm.total_s == pytest.approx(2 * MS) and mm.share == pytest.approx(2 / 4.9)
    assert s.top_nodes[0].node == "mm" and s.top_nodes[0].source == "seed.py:8"


def test_graphs_add_up_and_races_are_deduplicated() -> None:
    a, b = seed_two_streams(), single_stream()
    b.graph = "graph_2"
    t = with_race()
    s = summarize([a, b], races=t.races * 2)
    assert s.span_s == pytest.approx(9 * MS)
    assert {x.stream: x.busy_s for x in s.streams} == pytest.approx({"default": 6.9 * MS, "stream_1": 3 * MS})
    assert s.step_s == pytest.approx(9.4 * MS)  # graph step times add up
    assert [p.graph for p in s.critical_path][-1] == "graph_2"
    assert len(s.races) == 1


def test_summary_json_has_the_documented_keys() -> None:
    data = summarize([with_race()]).to_json()
    assert {"streams", "overlap_s", "critical_path", "races", "trace"} <= set(data)
    assert set(data["streams"][0]) >= {"stream", "busy_s", "idle_s"}
    assert data["races"][0]["reader"] == "sub" and data["races"][0]["producer_source"] == "seed.py:8"
    assert data["critical_path"][0]["dur_s"] >= 0


def test_empty_timeline() -> None:
    s = summarize([Timeline("g", "max-autotune")])
    assert s.streams == [] and s.critical_path == [] and s.overlap_s == 0 and s.step_s is None

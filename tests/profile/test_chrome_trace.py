"""airctl/profile/chrome_trace.py: a lane per stream, X events with args, record→wait flows, races."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from airctl.execute.timeline import Timeline
from airctl.profile.chrome_trace import write_chrome_trace

from .timelines import seed_two_streams, with_race


def _written(tmp_path: Path, timelines: list[Timeline]) -> dict[str, Any]:
    """The trace as written (one event at a time) and read back."""
    write_chrome_trace(tmp_path / "trace.json", timelines)
    return json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))


def _lanes(doc: dict) -> dict[int, str]:
    return {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}


def _inside(ts: float, slice_: dict) -> bool:
    return slice_["ts"] <= ts <= slice_["ts"] + slice_["dur"]


def test_two_stream_lanes_and_a_record_wait_flow(tmp_path: Path) -> None:
    doc = _written(tmp_path, [seed_two_streams()])
    assert _lanes(doc) == {1: "stream default", 2: "stream stream_1"}
    ops = {e["name"]: e for e in doc["traceEvents"] if e["ph"] == "X"}
    assert ops["mm"]["tid"] == 2 and ops["sub"]["tid"] == 1
    assert ops["mm"]["args"] == {"node": "mm", "op": "aten.mm.default", "source": "seed.py:8", "step": 0}
    assert ops["mm"]["dur"] == 2000.0  # µs
    flows = [e for e in doc["traceEvents"] if e["ph"] in ("s", "f")]
    start, finish = sorted(flows, key=lambda e: e["ph"] != "s")
    assert start["id"] == finish["id"] and start["name"] == "record_wait" and finish["bp"] == "e"
    assert start["tid"] == 2 and _inside(start["ts"], ops["record"])  # bound inside the record...
    assert finish["tid"] == 1 and _inside(finish["ts"], ops["wait"])  # ...and inside the wait
    proc = [e for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"]
    assert proc[0]["args"]["name"] == "graph_1 (max-autotune)"


def test_steps_follow_each_other(tmp_path: Path) -> None:
    doc = _written(tmp_path, [seed_two_streams(steps=3)])
    starts = sorted(e["ts"] for e in doc["traceEvents"] if e["ph"] == "X" and e["name"] == "mm")
    assert len(starts) == 3 and starts[0] < starts[1] < starts[2]
    assert starts[1] >= 4200  # after the first step's measured time
    assert len([e for e in doc["traceEvents"] if e["ph"] == "s"]) == 3
    assert len({e["id"] for e in doc["traceEvents"] if e["ph"] == "s"}) == 3


def test_race_is_an_instant_on_the_readers_lane(tmp_path: Path) -> None:
    doc = _written(tmp_path, [with_race()])
    (race,) = [e for e in doc["traceEvents"] if e["ph"] == "i"]
    assert race["tid"] == 1 and race["name"].startswith("race: sub reads mm")
    assert race["args"]["reader_source"] == "seed.py:11"
    assert not [e for e in doc["traceEvents"] if e["ph"] in ("s", "f")]

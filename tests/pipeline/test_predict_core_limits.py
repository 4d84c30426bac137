"""profile --times honours npugraph_ex's per-stream core limits (issue: capture safety, point 5), by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.devices import device
from airctl.io.read import read_graph
from airctl.pipeline.predict import with_stream_limits
from airctl.predict.plan import plan_from_graph
from airctl.predict.step import Conditions, price

GRAPH = Path(__file__).resolve().parents[2] / "fixtures" / "checks" / "capture" / "core_limits_exceed_device_ok.json"


def test_limited_streams_stretch_their_kernels_by_hand() -> None:
    """limit_core_num(8, 16) on both streams of a 910B3 (20 cube + 40 vector cores): mm (100 µs on 16 cube
    cores) gets 8 and takes 200 µs on graph_1_stream; abs (10 µs on 32 vector cores) gets 16 and takes 20 µs;
    add (5 µs, no count) waits for mm's record: 200 + 5. Without the limits: 100 + 5."""
    plan = plan_from_graph(read_graph(GRAPH), "npugraph_ex")
    times = {"mm": (100.0, 16.0), "abs_1": (10.0, 32.0), "add": (5.0, None)}
    durations = [times.get(t.name, (0.0, None))[0] if t.kind == "kernel" else 0.0 for t in plan.tasks]
    cores = [times.get(t.name, (0.0, None))[1] for t in plan.tasks]
    cond = Conditions(device=device("910B3"), launch_us=0.0)
    limited = price(plan, durations, cores, with_stream_limits(cond, plan))
    assert limited.step_us == pytest.approx(205.0)
    ends = {t.name: limited.replayed.end_us[t.index] for t in plan.tasks}
    assert ends["mm"] == pytest.approx(200.0) and ends["abs_1"] == pytest.approx(20.0)
    assert price(plan, durations, cores, cond).step_us == pytest.approx(105.0)

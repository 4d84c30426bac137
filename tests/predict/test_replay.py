"""The replay model's exact cases (docs/profile.md "Predicted profiles"), computed by hand."""

from __future__ import annotations

import pytest

from airctl.predict.plan import KERNEL, MARKER, ReplayPlan, Task
from airctl.predict.replay import ReplayDeadlock, replay


def chains(n: int, us: float) -> tuple[ReplayPlan, list[float]]:
    """Two independent chains of ``n`` kernels, one on each stream."""
    tasks = [Task(i, f"a{i}", "aten.mm.default", "default", KERNEL) for i in range(n)]
    tasks += [Task(n + i, f"b{i}", "aten.mm.default", "s1", KERNEL) for i in range(n)]
    return ReplayPlan("g", "reduce-overhead", "fx", tasks), [us] * (2 * n)


def test_two_independent_chains_take_the_longer_chain() -> None:
    plan, durs = chains(5, 10.0)
    durs[5:] = [12.0] * 5
    assert replay(plan, durs).span_us == pytest.approx(60.0)


def test_ops_that_each_demand_every_core_take_the_sum() -> None:
    plan, durs = chains(4, 10.0)
    done = replay(plan, durs, cores=[24.0] * 8, total_cores=24)
    assert done.span_us == pytest.approx(80.0)
    assert done.shared


def test_ops_that_fit_together_in_the_cores_overlap_fully() -> None:
    plan, durs = chains(4, 10.0)
    assert replay(plan, durs, cores=[12.0] * 8, total_cores=24).span_us == pytest.approx(40.0)


def test_half_oversubscribed_cores_slow_both_by_their_share() -> None:
    # 16 + 16 cores of 24: both run at 24/32 = 0.75 speed: 10 µs of work takes 13.33 µs
    plan = ReplayPlan("g", "reduce-overhead", "fx", [Task(0, "a", "mm", "default", KERNEL),
                                                    Task(1, "b", "mm", "s1", KERNEL)])
    assert replay(plan, [10.0, 10.0], cores=[16.0, 16.0], total_cores=24).span_us == pytest.approx(40 / 3)


def test_a_wait_on_a_late_record_starts_at_the_records_time() -> None:
    tasks = [Task(0, "mm", "mm", "s1", KERNEL), Task(1, "record", "air.record.default", "s1", MARKER),
             Task(2, "x", "add", "default", KERNEL),
             Task(3, "wait", "air.wait.default", "default", MARKER, after=[(1, "record_wait")]),
             Task(4, "sub", "sub", "default", KERNEL)]
    done = replay(ReplayPlan("g", "reduce-overhead", "fx", tasks), [70.0, 0.0, 5.0, 0.0, 3.0])
    assert done.start_us[3] == pytest.approx(5.0)  # the wait starts when its stream reaches it
    assert done.end_us[3] == pytest.approx(70.0)  # and is released at the record
    assert done.start_us[4] == pytest.approx(70.0)
    assert done.span_us == pytest.approx(73.0)
    syncs = done.timeline.syncs
    assert [(s.src, s.dst, s.kind) for s in syncs] == [("record", "wait", "record_wait")]


def test_dispatch_gap_and_event_latency_follow_each_kernel_and_event() -> None:
    tasks = [Task(0, "a", "mm", "s1", KERNEL), Task(1, "b", "mm", "s1", KERNEL),
             Task(2, "c", "add", "default", KERNEL, after=[(1, "record_wait")])]
    done = replay(ReplayPlan("g", "max-autotune", "ge", tasks), [10.0, 10.0, 1.0], gap_us=2.0, latency_us=0.5)
    # a: 0-10, gap to 12, b: 12-22, c released at 22.5, ends 23.5
    assert done.start_us[1] == pytest.approx(12.0)
    assert done.start_us[2] == pytest.approx(22.5)
    assert done.span_us == pytest.approx(23.5)


def test_a_wait_on_a_record_later_on_its_own_stream_deadlocks_with_names() -> None:
    tasks = [Task(0, "wait", "air.wait.default", "default", MARKER, after=[(2, "record_wait")]),
             Task(1, "mm", "mm", "s1", KERNEL, after=[(3, "record_wait")]),
             Task(2, "record", "air.record.default", "s1", MARKER), Task(3, "r2", "air.record.default", "default",
                                                                           MARKER)]
    with pytest.raises(ReplayDeadlock, match="wait on default waits for record"):
        replay(ReplayPlan("g", "reduce-overhead", "fx", tasks), [0.0, 5.0, 0.0, 0.0])


def test_markers_and_free_tasks_take_no_time_whatever_the_table() -> None:
    tasks = [Task(0, "r", "air.record.default", "default", MARKER), Task(1, "mm", "mm", "default", KERNEL)]
    assert replay(ReplayPlan("g", "reduce-overhead", "fx", tasks), [99.0, 4.0]).span_us == pytest.approx(4.0)

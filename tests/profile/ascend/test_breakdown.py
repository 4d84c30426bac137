"""airctl/profile/ascend/breakdown.py and cross_rank.py on hand-made tasks (times in ns)."""

from __future__ import annotations

from pathlib import Path

from airctl.profile.ascend.breakdown import breakdown, subtract
from airctl.profile.ascend.cross_rank import cross_rank
from airctl.profile.ascend.model import RankData, Task
from airctl.profile.events import union


def test_interval_helpers() -> None:
    assert union([(5, 9), (0, 2), (1, 3)]) == [(0, 3), (5, 9)]
    assert subtract([(0, 10), (20, 30)], [(2, 4), (8, 22), (25, 26)]) == [(0, 2), (4, 8), (22, 25), (26, 30)]


def tasks(step: int, at: int, comm_start: int, comm_dur: int, receive: bool = False) -> list[Task]:
    name = "hcom_receive_1_1" if receive else "hcom_allReduce__1_0_1"
    return [Task("mm", "MatMul", "2", at, 10_000, step), Task("mm", "MatMul", "2", at + 12_000, 8_000, step),
            Task("EVENT_WAIT", "EVENT_WAIT", "2", at + 10_000, 1_000, step),  # a marker: no work
            Task(name, name, "8", at + comm_start, comm_dur, step, comm=True)]


def test_per_step_numbers_as_the_profiler_defines_them() -> None:
    got = breakdown(tasks(1, 0, 15_000, 10_000) + tasks(2, 40_000, 5_000, 1_000, receive=True),
                    host_steps={1: (-5_000, 32_000)})
    one, two = (s.to_json() for s in got)
    # step 1: C = [0,10)+[12,20) = 18 µs, M = [15,25) = 10 µs, overlap [15,20) = 5 µs
    assert (one["computing_us"], one["communication_us"], one["overlapped_us"],
            one["communication_not_overlapped_us"]) == (18.0, 10.0, 5.0, 5.0)
    # free: the gap [10,12) and the gap to step 2 [25,40), which starts inside step 1's window (host end 32)
    assert one["free_us"] == 17.0 and one["window_us"] == 32.0
    assert (two["bubble_us"], two["stage_us"]) == (1.0, 20.0 - 1.0)


def rank(r: int, arrive: int, slow: int) -> tuple[RankData, list]:
    ts = [Task("mm", "MatMul", "2", 0, 10_000 + slow, 1),
          Task("hcom_allReduce__1_0_1", "hcom_allReduce_", "8", arrive, 30_000 - arrive, 1, comm=True),
          Task("add", "Add", "2", 30_000, 1_000 + slow, 1)]
    data = RankData(Path(f"r{r}"), r, ts, "x", {}, host=f"h{r}")
    return data, breakdown(ts)


def test_cross_rank_finds_the_straggler_and_the_wait() -> None:
    view = cross_rank([rank(0, 10_000, 0), rank(1, 14_000, 4_000)])
    (step,) = view["steps"]
    assert (step["slowest_rank"], step["spread_us"]) == (1, 4.0)
    assert (step["wait_skew_us"], step["late_rank"], view["late_rank"]) == (4.0, 1, 1)
    assert [p["wait_us"] for p in step["per_rank"]] == [4.0, 0.0]
    assert "2 hosts" in view["clock"]

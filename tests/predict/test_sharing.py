"""The replay's resource rules, each against a hand computation (docs/profile.md "The model", rule 4):
cube and vector pools apart, a kernel alone never slowed, a kernel with no core count neither slowing
nor slowed, shared HBM bandwidth for memory-bound kernels only, and the host's releases."""

from __future__ import annotations

import pytest

from airctl.devices import DEVICES, device
from airctl.predict.plan import KERNEL, ReplayPlan, Task
from airctl.predict.replay import Resources, replay
from airctl.predict.step import Conditions, core_demand, kind_of, price

B2 = DEVICES["910B2"]  # 24 cube + 48 vector cores


def side_by_side(*ops: str) -> ReplayPlan:
    """One kernel per stream, nothing ordering them."""
    return ReplayPlan("g", "reduce-overhead", "fx", [Task(i, f"k{i}", op, f"s{i}", KERNEL) for i, op in enumerate(ops)])


def pools() -> dict[str, float]:
    return {k: float(v) for k, v in B2.pools().items()}


def test_a_kernel_alone_is_never_slowed_even_asking_for_more_cores_than_the_chip_has() -> None:
    plan = side_by_side("aten.mm.default")
    done = replay(plan, [289.0], resources=Resources(pools(), [{"cube": 40.0}]))
    assert done.span_us == pytest.approx(289.0) and not done.shared


def test_a_matmul_beside_a_vector_op_is_not_slowed_when_each_pool_has_room() -> None:
    # cube 24 of 24 and vector 48 of 48: two pools, no contention: max(100, 60)
    plan = side_by_side("aten.mm.default", "aten._softmax.default")
    done = replay(plan, [100.0, 60.0], resources=Resources(pools(), [{"cube": 24.0}, {"vector": 48.0}]))
    assert done.end_us == pytest.approx([100.0, 60.0]) and not done.shared


def test_the_same_two_kernels_on_one_coupled_pool_share_it() -> None:
    # a coupled chip of 24 AI cores: demand 24 + 24 = 48 > 24, both at half speed until the shorter ends:
    # 60 µs of work at 0.5 -> 120 µs; the matmul has 40 µs left at full speed -> 160 µs
    plan = side_by_side("aten.mm.default", "aten._softmax.default")
    done = replay(plan, [100.0, 60.0], resources=Resources({"aicore": 24.0}, [{"aicore": 24.0}, {"aicore": 24.0}]))
    assert done.end_us == pytest.approx([160.0, 120.0])


def test_two_vector_kernels_oversubscribing_their_pool_each_run_at_its_share() -> None:
    # 48 + 48 of 48 vector cores: each at 1/2 -> 10 µs of work takes 20 µs
    plan = side_by_side("aten.add.Tensor", "aten.mul.Tensor")
    done = replay(plan, [10.0, 10.0], resources=Resources(pools(), [{"vector": 48.0}, {"vector": 48.0}]))
    assert done.span_us == pytest.approx(20.0) and done.core_bound_us == pytest.approx(20.0)


def test_a_kernel_with_no_core_count_is_not_slowed_beside_oversubscribed_ones() -> None:
    plan = side_by_side("aten.add.Tensor", "aten.mul.Tensor", "aten.abs.default")
    done = replay(plan, [10.0, 10.0, 13.0], resources=Resources(pools(), [{"vector": 48.0}, {"vector": 48.0}, None]))
    assert done.end_us == pytest.approx([20.0, 20.0, 13.0])


def test_a_mixed_kernel_runs_at_its_slower_pool() -> None:
    # attention: 24 cube + 48 vector; beside a 48-vector add: vector demand 96 of 48 -> 1/2; cube free.
    # both at 1/2 until the add's 10 µs of work is done (t=20), then attention alone: 30 - 10 = 20 more
    plan = side_by_side("aten._scaled_dot_product_flash_attention.default", "aten.add.Tensor")
    res = Resources(pools(), [{"cube": 24.0, "vector": 48.0}, {"vector": 48.0}])
    done = replay(plan, [30.0, 10.0], resources=res)
    assert done.end_us == pytest.approx([40.0, 20.0])


def test_two_memory_bound_kernels_share_the_bandwidth_and_a_compute_bound_one_does_not() -> None:
    # bandwidth 100 B/µs; two memory-bound kernels each moving 100 B/µs alone: each at 1/2 -> 20 µs;
    # a compute-bound kernel (no traffic) beside them keeps its 10 µs
    plan = side_by_side("aten.add.Tensor", "aten.mul.Tensor", "aten.mm.default")
    done = replay(plan, [10.0, 10.0, 10.0], resources=Resources(bandwidth=100.0, traffic=[100.0, 100.0, None]))
    assert done.end_us == pytest.approx([20.0, 20.0, 10.0])
    assert done.bandwidth_bound_us == pytest.approx(20.0)


def test_traffic_under_the_bandwidth_is_not_slowed() -> None:
    plan = side_by_side("aten.add.Tensor", "aten.mul.Tensor")
    done = replay(plan, [10.0, 10.0], resources=Resources(bandwidth=100.0, traffic=[40.0, 60.0]))
    assert done.span_us == pytest.approx(10.0) and done.bandwidth_bound_us == 0.0


def test_a_task_starts_no_earlier_than_the_host_released_it() -> None:
    tasks = [Task(0, "a", "mm", "s", KERNEL), Task(1, "b", "mm", "s", KERNEL), Task(2, "c", "add", "t", KERNEL)]
    done = replay(ReplayPlan("g", "reduce-overhead", "profile", tasks), [10.0, 10.0, 5.0],
                  resources=Resources(release_us=[0.0, 50.0, None]))
    assert done.start_us == pytest.approx([0.0, 50.0, 0.0]) and done.span_us == pytest.approx(60.0)


def test_core_demand_reads_the_profiles_block_dims_and_the_ops_kind() -> None:
    mix = Task(0, "fa", "FlashAttentionScore", "2", KERNEL, meta={"core": "MIX_AIC", "blocks": (24, 48)})
    assert core_demand(mix, None, B2) == {"cube": 24.0, "vector": 48.0}
    assert kind_of(Task(1, "mm", "MatMulV2", "2", KERNEL)) == "cube"
    assert core_demand(Task(2, "add", "aten.add.Tensor", "s", KERNEL), 16.0, B2) == {"vector": 16.0}
    assert core_demand(Task(3, "add", "aten.add.Tensor", "s", KERNEL), None, B2) is None


def test_price_adds_the_modes_launch_cost_once_per_graph() -> None:
    plan = side_by_side("aten.mm.default", "aten.mm.default")
    priced = price(plan, [100.0, 100.0], [24.0, 24.0], Conditions(device=B2))
    assert priced.replayed.span_us == pytest.approx(200.0)  # both want every cube core: the sum
    assert priced.step_us == pytest.approx(200.0 + 15.0)  # reduce-overhead: one aclgraph launch
    assert price(plan, [100.0, 100.0], [24.0, 24.0], Conditions()).replayed.span_us == pytest.approx(100.0)


def test_the_device_table_names_a_source_for_every_device_and_refuses_the_left_out_ones() -> None:
    from airctl.devices import SOURCES, device_help
    from airctl.errors import AirctlError

    for d in DEVICES.values():
        assert d.sources and all(s in SOURCES for s in d.sources)
    assert device("Ascend910B").name == "910B3" and device("a3").name == "910C"
    with pytest.raises(AirctlError, match="910B1.*no public document"):
        device("910B1")
    assert all(name in device_help() for name in DEVICES)


def test_a_per_stream_core_limit_caps_the_cores_and_stretches_the_kernel() -> None:
    # limit_core_num(aic=12, aiv=24, stream=s1): a 24-cube-core matmul on s1 gets 12, and takes 2 × 100 µs;
    # beside it on s0 a 12-cube-core matmul: 12 + 12 = 24 fit the pool, so nothing else slows
    plan = side_by_side("aten.mm.default", "aten.mm.default")
    limits = {"s1": {"cube": 12.0, "vector": 24.0}}
    priced = price(plan, [100.0, 100.0], [12.0, 24.0], Conditions(device=B2, stream_limits=limits))
    assert priced.replayed.end_us == pytest.approx([100.0, 200.0]) and not priced.replayed.shared

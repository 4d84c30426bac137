"""Collectives under sim: HCCL process groups become gloo, TorchAir's ``npu_define`` collectives have
CPU kernels (a world of one: no network). That TorchAir's import leaves SIGTERM/SIGINT to the process
is checked in a fresh child of a script (tests/sim/test_conformance_standins.py)."""

from __future__ import annotations

import datetime

import pytest

from airctl.sim.patched_torch_distributed import _adjusted


def _session(timeout_s: float | None = None):
    from airctl.backends.sim import sim_context
    from airctl.pipeline.run.execution import RunExecution
    from airctl.sim.session import session

    return session(sim_context(RunExecution(collective_timeout_s=timeout_s)))


def test_hccl_is_gloo_under_sim_and_the_functions_come_back() -> None:
    import torch
    import torch.distributed as dist

    original = dist.init_process_group
    with _session(timeout_s=7):
        assert dist.init_process_group is not original
        dist.init_process_group("hccl", store=dist.HashStore(), rank=0, world_size=1)
        try:
            assert dist.get_backend() == "gloo"
            t = torch.ones(3)
            dist.all_reduce(t)
            assert t.tolist() == [1.0, 1.0, 1.0]
        finally:
            dist.destroy_process_group()
    assert dist.init_process_group is original


def test_backend_timeout_and_device_arguments_are_rewritten_only_when_npu_or_unset() -> None:
    seen = {}

    def init_process_group(backend=None, init_method=None, timeout=None, device_id=None):  # torch's names
        seen.update(backend=backend, timeout=timeout, device_id=device_id)

    call = _adjusted(init_process_group, 7.0)
    call("npu:hccl", device_id="npu:1")
    assert seen == {"backend": "cpu:gloo", "timeout": datetime.timedelta(seconds=7), "device_id": None}
    call(backend="gloo", timeout=datetime.timedelta(seconds=99))
    assert seen["backend"] == "gloo" and seen["timeout"] == datetime.timedelta(seconds=99)  # the script's own
    _adjusted(init_process_group, None)("hccl")
    assert seen["timeout"] is None  # single-rank runs keep torch's default


def test_torchairs_npu_define_collectives_run_on_the_cpu() -> None:
    import torch
    import torch.distributed as dist

    from airctl.sim.registry import REGISTRY

    with _session():
        assert {"broadcast", "_send", "_recv", "all_to_all_single_npu"} <= set(REGISTRY.collective_kernels)
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        try:
            from torch.distributed import distributed_c10d as c10d

            tag = c10d._get_group_tag(c10d._world.default_pg)
            out = torch.ops.npu_define.broadcast(torch.arange(4.0), 0, tag, [0], 1)
            assert out.tolist() == [0.0, 1.0, 2.0, 3.0]
        finally:
            dist.destroy_process_group()


@pytest.mark.slow
def test_a_session_after_init_process_group_still_traces_factories_into_one_graph() -> None:
    """init_process_group clears Dynamo's trace-rule caches, which then resolve torch.ones to the
    session's wrapper; the next session must not find them pointing at the previous one's."""
    import torch
    import torch.distributed as dist

    def graphs_of(fn):
        seen = []

        def backend(gm, example_inputs):
            seen.append(gm)
            return gm.forward

        torch._dynamo.reset()
        torch.compile(fn, backend=backend)(torch.randn(3))
        return len(seen)

    def model(x):
        return (x + torch.ones(3)) * torch.zeros(3).add(2)

    with _session():
        dist.init_process_group("hccl", store=dist.HashStore(), rank=0, world_size=1)
        dist.destroy_process_group()
        assert graphs_of(model) == 1
    with _session():
        assert graphs_of(model) == 1  # a graph break at each factory call otherwise

"""Under sim, ``torch_npu`` looks like the installed wheel from outside: every ``torch.ops.npu`` op as
``torch_npu.<op>``, ``torch_npu.npu``'s ``__all__`` (what sim leaves out says why), and the libraries
that probe for an NPU (transformers, accelerate, vllm-ascend-style plugins) import and find one."""

from __future__ import annotations

import pytest

from airctl.sim.torchair_loader import torch_npu_root
from airctl.sim.wheel_surface import installed_surface, read_surface

pytestmark = pytest.mark.skipif(torch_npu_root() is None, reason="the torch-npu wheel is not installed")


def _session():
    from airctl.backends.sim import sim_context
    from airctl.pipeline.run.execution import RunExecution
    from airctl.sim.session import session

    return session(sim_context(RunExecution()))


def test_the_surface_is_read_from_the_wheel_files() -> None:
    surface = installed_surface()
    # the ops torch_npu's exports put at top level: the yaml's custom sections and Python Library("npu") defines
    assert len(surface.npu_ops) > 300
    assert surface.npu_ops["npu_fusion_attention"][0].startswith("npu_fusion_attention(Tensor query, Tensor key")
    assert "super_kernel_scope_begin" in surface.npu_ops  # defined in torch_npu/npu/graphs.py
    assert surface.public_ops <= set(surface.npu_ops)  # public_npu_functions are ops of the wheel
    assert {"HiFloat8Tensor", "erase_stream", "matmul_checksum"} <= surface.top_all
    assert {"is_available", "device_count", "mem_get_info", "Stream"} <= surface.npu_all
    assert read_surface(None).top_level() == frozenset()


def test_every_wheel_op_is_a_top_level_name_of_the_stand_in() -> None:
    import torch

    from airctl.sim import torch_npu as standin

    surface = installed_surface()
    for name in surface.npu_ops:
        op = getattr(standin, name)
        assert op is getattr(torch.ops.npu, name), name
    assert set(surface.npu_ops) <= set(dir(standin))
    # an op sim has no kernel for exists by the wheel's schema, and says why it does not compute
    with pytest.raises(NotImplementedError, match="sim: torch_npu.npu_rotary_mul is an NPU kernel"):
        standin.npu_rotary_mul(torch.ones(1, 1, 1, 4), torch.ones(1, 1, 1, 4), torch.ones(1, 1, 1, 4))
    assert standin.npu_fusion_attention is torch.ops.npu.npu_fusion_attention  # sim's own kernel stays


def test_what_the_stand_in_leaves_out_is_listed_with_why() -> None:
    from airctl.sim import torch_npu as standin
    from airctl.sim import wheel_ops
    from airctl.sim.torch_npu import npu, npu_probes

    surface = installed_surface()
    missing_npu = surface.npu_all - set(dir(npu))
    assert missing_npu == set(npu_probes.LEFT_OUT), "torch_npu.npu.__all__ names neither offered nor left out"
    assert set(wheel_ops.LEFT_OUT) == surface.top_all - set(dir(standin))
    with pytest.raises(AttributeError, match="sim has no device memory to manage"):
        _ = npu.MemPool
    with pytest.raises(AttributeError, match="not under airctl's sim: silent-data-corruption"):
        _ = standin.matmul_checksum
    with pytest.raises(AttributeError, match="has no attribute 'no_such_op'"):
        _ = standin.no_such_op


def test_the_probed_device_functions_answer() -> None:
    import torch

    from airctl.sim.torch_npu import npu

    assert npu.is_available() and npu.device_count() == 1
    assert npu.mem_get_info() == (0, 0) and npu.memory_stats() == {}
    state = npu.get_rng_state()
    npu.set_rng_state(state)
    assert npu.is_bf16_supported()
    with npu.amp.autocast(dtype=torch.bfloat16):
        assert torch.is_autocast_enabled("cpu")
    with npu.device(0):
        pass


def test_transformers_and_accelerate_find_the_npu_under_sim() -> None:
    pytest.importorskip("transformers")
    with _session():
        import torch
        from transformers.utils import is_torch_npu_available

        assert is_torch_npu_available() and is_torch_npu_available(check_device=True)
        from torch_npu import npu_fusion_attention  # what transformers' NPU flash-attention imports

        assert npu_fusion_attention is torch.ops.npu.npu_fusion_attention
        import transformers.integrations.npu_flash_attention as npu_fa  # noqa: F401

        accelerate = pytest.importorskip("accelerate.utils")
        assert accelerate.is_npu_available()
        # a vllm-ascend-style plugin: ops through torch.ops.npu and torch_npu, device queries through torch.npu
        import torch_npu

        assert callable(torch_npu.npu_rotary_mul) and hasattr(torch.ops.npu, "npu_moe_gating_top_k_softmax")
        assert torch.npu.get_device_name(0) and torch.npu.mem_get_info()[0] == 0

"""The ``torch_npu.npu`` functions libraries probe, under sim; and what sim leaves out, with why.

transformers, accelerate and vllm-ascend-style plugins ask the device module about memory
(``mem_get_info``, ``memory_stats``, ``reset_peak_memory_stats``), random state, amp
(``torch.npu.amp.GradScaler``, ``is_bf16_supported``) and device selection (``torch.npu.device``).
Under sim the device is the CPU: memory is reported as zero in use, random state is the CPU
generator's, amp is CPU autocast, and option setters (``set_option``, ``set_compile_mode``, dump
switches) are accepted and have nothing to change. The names come from the wheel's
``torch_npu.npu.__all__`` (:mod:`airctl.sim.wheel_surface`); :data:`LEFT_OUT` says which of them sim
does not offer and why, and ``torch.npu.<name>`` of one raises an ``AttributeError`` saying so.
"""

from __future__ import annotations

import contextlib
import functools
from types import SimpleNamespace
from typing import Any

import torch

from airctl.sim.torch_npu.npu import _none, _zero

# name -> why sim does not offer it (tests/sim/test_wheel_surface.py keeps this in step with the wheel)
_WHY = {
    "typed storages and tensor types of device memory (legacy constructors): create tensors with "
    "device='npu' instead": ("BFloat16Storage", "BFloat16Tensor", "BoolStorage", "BoolTensor", "ByteStorage",
                             "ByteTensor", "CharStorage", "CharTensor", "DoubleStorage", "DoubleTensor",
                             "FloatStorage", "FloatTensor", "HalfStorage", "HalfTensor", "IntStorage", "IntTensor",
                             "LongStorage", "LongTensor", "ShortStorage", "ShortTensor"),
    "the NPU caching allocator and its pools: sim has no device memory to manage": (
        "MemPool", "NPUPluggableAllocator", "caching_allocator_alloc", "caching_allocator_delete",
        "change_current_allocator", "get_allocator_backend", "use_mem_pool", "empty_virt_addr_cache",
        "host_empty_cache", "host_memory_stats", "host_memory_stats_as_nested_dict",
        "reset_accumulated_host_memory_stats", "reset_peak_host_memory_stats", "memory_snapshot"),
    "device health and recovery (UCE, overflow flags, stress tests): hardware state sim does not have": (
        "stop_device", "restart_device", "check_uce_in_memory", "stress_detect", "get_npu_overflow_flag",
        "clear_npu_overflow_flag"),
    "NPU-graph task groups, handlers and super kernels: capture and replay are not simulated": (
        "graph_task_group_begin", "graph_task_group_end", "graph_task_update_begin", "graph_task_update_end",
        "NpuGraphOpHandler", "register_npu_graph_handler", "make_graphed_callables", "super_kernel_scope_begin",
        "super_kernel_scope_end", "SyncLaunchStream"),
    "model obfuscation, mstx ranges, the runtime handle and BLAS handles: CANN services with no CPU meaning": (
        "obfuscation_initialize", "obfuscation_calculate", "obfuscation_finalize", "mstx", "npurt",
        "current_blas_handle", "CubeMathType", "use_compatible_impl", "are_compatible_impl_enabled"),
}
LEFT_OUT: dict[str, str] = {name: why for why, names in _WHY.items() for name in names}


def left_out_error(module: str, name: str) -> AttributeError:
    why = LEFT_OUT.get(name)
    if why is None:
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    return AttributeError(f"{module}.{name} exists in the torch-npu wheel but not under airctl's sim: {why}")


# memory: nothing is held on a device that is the CPU
def mem_get_info(device: Any = None) -> tuple[int, int]:
    return (0, 0)


def memory_stats(device: Any = None) -> dict[str, int]:
    return {}


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    return {}


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    return "airctl sim: no device memory (the NPU is the CPU)"


memory_reserved = max_memory_reserved = memory_cached = max_memory_cached = _zero
reset_peak_memory_stats = reset_max_memory_allocated = reset_max_memory_cached = _none
reset_accumulated_memory_stats = ipc_collect = _none


def get_per_process_memory_fraction(device: Any = None) -> float:
    return 1.0


set_per_process_memory_fraction = _none

# random state: the device's numbers come from the CPU generator (npu.default_generators)


def get_rng_state(device: Any = "npu") -> torch.Tensor:
    return torch.get_rng_state()


def set_rng_state(new_state: torch.Tensor, device: Any = "npu") -> None:
    torch.set_rng_state(new_state)


def get_rng_state_all() -> list[torch.Tensor]:
    return [torch.get_rng_state()]


def set_rng_state_all(new_states: list[torch.Tensor]) -> None:
    if new_states:
        torch.set_rng_state(new_states[0])


def seed() -> None:
    torch.seed()


seed_all = seed


def initial_seed() -> int:
    return torch.initial_seed()


random = SimpleNamespace(get_rng_state=get_rng_state, set_rng_state=set_rng_state,  # constant: a module there
                         get_rng_state_all=get_rng_state_all, set_rng_state_all=set_rng_state_all,
                         manual_seed=torch.manual_seed, seed=seed, initial_seed=initial_seed)

# amp: CPU autocast stands in for NPU autocast


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True


def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16, torch.float32]


def is_autocast_enabled() -> bool:
    return torch.is_autocast_enabled("cpu")


def set_autocast_enabled(enabled: bool) -> None:
    torch.set_autocast_enabled("cpu", enabled)


def get_autocast_dtype() -> torch.dtype:
    return torch.get_autocast_dtype("cpu")


def set_autocast_dtype(dtype: torch.dtype) -> None:
    torch.set_autocast_dtype("cpu", dtype)


amp = SimpleNamespace(autocast=functools.partial(torch.autocast, "cpu"),  # constant: a module there
                      GradScaler=functools.partial(torch.amp.GradScaler, "cpu"),
                      custom_fwd=functools.partial(torch.amp.custom_fwd, device_type="cpu"),
                      custom_bwd=functools.partial(torch.amp.custom_bwd, device_type="cpu"))

# device selection: one device, index 0


class device(contextlib.ContextDecorator):  # noqa: N801  (torch_npu's name)
    def __init__(self, device: Any) -> None:
        self.idx = 0

    def __enter__(self) -> device:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


def device_of(obj: Any) -> device:
    return device(obj)


def get_device_capability(device: Any = None) -> tuple[int, int]:
    return (0, 0)


def can_device_access_peer(device: Any, peer_device: Any) -> bool:
    return False


def utilization(device: Any = None) -> int:
    return 0


def is_current_stream_capturing() -> bool:
    return False


def is_jit_compile_false() -> bool:
    return True


# options and switches a CPU has nothing to change for
set_option = set_compile_mode = set_aoe = set_mm_bmm_format_nd = set_dump = init_dump = finalize_dump = _none
set_sync_debug_mode = set_task_queue_enable = set_op_timeout_ms = _none
enable_deterministic_with_backward = disable_deterministic_with_backward = reset_stream_limit = _none
set_device_limit = _none


def get_mm_bmm_format_nd() -> bool:
    return True


def get_sync_debug_mode() -> int:
    return 0


def get_task_queue_enable() -> int:
    return 0


_NOT_PROBES = {"annotations", "Any", "SimpleNamespace", "LEFT_OUT", "left_out_error"}
__all__ = sorted(n for n, v in list(globals().items())  # what torch_npu.npu offers from here
                 if not n.startswith("_") and n not in _NOT_PROBES and not isinstance(v, type(functools)))

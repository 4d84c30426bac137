"""The ``npu`` device under sim: torch's PrivateUse1 backend, registered from Python, with CPU memory.

On an NPU, torch_npu registers PrivateUse1 in C++ (hooks, a device guard, an allocator, kernels) and
renames it ``npu``. Scripts and TorchAir's own system tests may perform the rename themselves
(``torch.utils.rename_privateuse1_backend("npu")``); torch 2.13 then treats ``npu`` as *the*
accelerator, and Dynamo asks it for its current stream on every frame. With nothing registered
behind PrivateUse1 torch answers ``PyTorch is not linked with support for npu devices``.

:func:`register` puts a device there with torch's Python registration (``torch._C._acc``):

- hooks (available, built, a primary context) and a device guard (one device, index 0, stream 0),
  so ``torch.accelerator`` and Dynamo work *whoever* performs the rename. Before a rename
  ``torch.accelerator.current_accelerator()`` stays ``None``: registering changes nothing for a
  script that never names the device;
- kernels for PrivateUse1 tensors whose memory is CPU memory, as the C++ fake device of TorchAir's
  tests keeps it (its allocator is ``alloc_cpu``): a PrivateUse1 tensor is a view of a CPU storage
  (the CPU storage rides on the PrivateUse1 storage object, so it lives as long as any view). Factory
  and metadata kernels are real (``empty``, ``empty_strided``, ``_copy_from``, ``fill_``, views,
  ``set_``, ``normal_``); every other op runs through a fallback that computes on CPU aliases of the
  same memory and hands back PrivateUse1 aliases of the results. So data is real (TorchAir's C++
  stub copies nothing; an NPU would hold the values).

Under a sim session the device word still maps ``npu`` to the CPU (:mod:`.patched_torch_device_word`):
graphs are traced and executed on CPU tensors, and eager references are CPU tensors. PrivateUse1
tensors appear only where something bypasses the word (a ``torch.device("privateuseone")`` made
before a rename, torch's own C++ factories); this module makes them work there too.

Registration is process-wide and cannot be undone (torch keeps one hook object per process):
:data:`airctl.sim.registry.REGISTRY` records it.
"""

from __future__ import annotations

from typing import Any

import torch

from airctl.sim.registry import REGISTRY

CPU_KEYS = "CPU"
ACL_FORMAT_ND = 2  # aclFormat: the plain row-major layout; sim's device has no private formats
# ops whose CPU kernel only rewrites a tensor's metadata (sizes, strides, storage): run it on the
# PrivateUse1 tensor itself
METADATA_OPS = ("as_strided", "view", "_reshape_alias", "set_.source_Storage_storage_offset",
                "set_.source_Storage", "set_.source_Tensor", "set_", "resize_", "unfold",
                "_unsafe_view", "alias")


def device() -> torch.device:
    return torch.device("privateuseone", 0)


def _cpu_keyset() -> Any:
    return torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


def with_storage(template: torch.Tensor, storage: Any, dtype: torch.dtype) -> torch.Tensor:
    """A tensor of ``storage``'s device with ``template``'s sizes, strides and offset."""
    if storage.device.type == "cpu":
        empty = torch.empty(0, dtype=dtype)
    else:
        empty = torch._C._acc.create_empty_tensor((0,), dtype)
    return torch.ops.aten.set_.source_Storage_storage_offset.redispatch(
        _cpu_keyset(), empty, storage, template.storage_offset(), template.shape, template.stride())


def to_npu(cpu: torch.Tensor) -> torch.Tensor:
    """A PrivateUse1 tensor over ``cpu``'s memory (no copy); it keeps that memory alive."""
    st = cpu.untyped_storage()
    npu_st = torch._C._construct_storage_from_data_pointer(st.data_ptr(), device(), st.nbytes())
    npu_st._airctl_cpu = st
    return with_storage(cpu, npu_st, cpu.dtype)


def to_cpu(npu: torch.Tensor) -> torch.Tensor:
    """A CPU tensor over ``npu``'s memory (no copy)."""
    npu_st = npu.untyped_storage()
    cpu_st = getattr(npu_st, "_airctl_cpu", None)
    if cpu_st is None:  # a storage made elsewhere (torch's own): alias its pointer
        cpu_st = torch._C._construct_storage_from_data_pointer(npu_st.data_ptr(), torch.device("cpu"),
                                                               npu_st.nbytes())
    return with_storage(npu, cpu_st, npu.dtype)


def _is_npu_tensor(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.device.type == device().type


def _iter_tensors(value: Any) -> list[torch.Tensor]:
    return [x for x in torch.utils._pytree.tree_leaves(value) if isinstance(x, torch.Tensor)]


def _map(fn: Any, value: Any) -> Any:
    return torch.utils._pytree.tree_map(lambda x: fn(x) if _is_npu_tensor(x) else x, value)


def _empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return to_npu(torch.empty(size, dtype=dtype, memory_format=memory_format))


def _empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    return to_npu(torch.empty_strided(size, stride, dtype=dtype))


def _copy_from(src: torch.Tensor, dst: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    target = to_cpu(dst) if _is_npu_tensor(dst) else dst
    target.copy_(to_cpu(src) if _is_npu_tensor(src) else src)
    return dst


def _fill(self: torch.Tensor, value: Any) -> torch.Tensor:
    to_cpu(self).fill_(value)
    return self


def _normal(self: torch.Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> torch.Tensor:
    to_cpu(self).normal_(mean, std)
    return self


def _local_scalar_dense(self: torch.Tensor) -> Any:
    return to_cpu(self).item()


def _npu_format(self: torch.Tensor) -> int:
    """torch_npu's ``get_npu_format``: every tensor of sim's device is in ND format (ACL_FORMAT_ND)."""
    return ACL_FORMAT_ND


def _metadata_kernel(op: Any) -> Any:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        return op.redispatch(_cpu_keyset(), *args, **kwargs)
    return kernel


def _fallback(op: Any, *args: Any, **kwargs: Any) -> Any:
    """Any other op on PrivateUse1 tensors: compute on CPU aliases of the same memory.

    A result that is one of the aliases (an in-place or ``out=`` op returns its argument) is handed
    back as the caller's own tensor; any other CPU result becomes a PrivateUse1 alias of itself."""
    originals: dict[int, torch.Tensor] = {}

    def alias(x: torch.Tensor) -> torch.Tensor:
        cpu = to_cpu(x)
        originals[id(cpu)] = x
        return cpu

    cpu_args, cpu_kwargs = _map(alias, (args, kwargs))
    out = op(*cpu_args, **cpu_kwargs)
    for key, x in originals.items():  # an out= tensor the CPU kernel resized: follow its new memory
        cpu = next(c for c in _iter_tensors((cpu_args, cpu_kwargs)) if id(c) == key)
        if cpu.untyped_storage().data_ptr() != x.untyped_storage().data_ptr() or cpu.shape != x.shape \
                or cpu.stride() != x.stride() or cpu.storage_offset() != x.storage_offset():
            moved = to_npu(cpu)
            torch.ops.aten.set_.source_Storage_storage_offset.redispatch(
                _cpu_keyset(), x, moved.untyped_storage(), cpu.storage_offset(), cpu.shape, cpu.stride())
    return torch.utils._pytree.tree_map(
        lambda x: originals.get(id(x)) if id(x) in originals else (
            to_npu(x) if isinstance(x, torch.Tensor) and x.device.type == "cpu" else x), out)


def register() -> bool:
    """Register the device (once per process); False when it already was."""
    with REGISTRY.ops_lock:  # not ``lock``: load_torchair holds it while it registers the device
        if REGISTRY.npu_device_registered:
            return False
        _register()
        REGISTRY.npu_device_registered = True
        return True


class _Hooks(torch._C._acc.PrivateUse1Hooks):
    def is_available(self) -> bool:
        return True

    def has_primary_context(self, device_index: int) -> bool:
        return True

    def is_built(self) -> bool:
        return True


class _Guard(torch._C._acc.DeviceGuard):
    def type_(self) -> Any:
        return torch._C._autograd.DeviceType.PrivateUse1


def _register() -> None:
    torch._C._acc.register_python_privateuseone_hook(_Hooks())
    torch._C._acc.register_python_privateuseone_device_guard(_Guard())
    lib = torch.library.Library("aten", "IMPL", "PrivateUse1")
    lib.impl("empty.memory_format", _empty)
    lib.impl("empty_strided", _empty_strided)
    lib.impl("_copy_from", _copy_from)
    lib.impl("fill_.Scalar", _fill)
    lib.impl("normal_", _normal)
    lib.impl("_local_scalar_dense", _local_scalar_dense)
    for name in METADATA_OPS:
        packet, _, overload = name.partition(".")
        op = getattr(getattr(torch.ops.aten, packet), overload or "default", None)
        if op is not None and torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), CPU_KEYS):
            lib.impl(name, _metadata_kernel(op))
    if hasattr(torch.ops.npu, "get_npu_format"):  # the wheel's op, defined by sim (wheel_ops) before this
        npu_lib = torch.library.Library("npu", "IMPL", "PrivateUse1")
        npu_lib.impl("get_npu_format", _npu_format)
        REGISTRY.op_libraries.append(npu_lib)
    fallback = torch.library.Library("_", "IMPL", "PrivateUse1")
    fallback.fallback(_fallback)
    autograd = torch.library.Library("_", "IMPL", "AutogradPrivateUse1")
    autograd.fallback(torch.library.fallthrough_kernel)
    REGISTRY.op_libraries.extend([lib, fallback, autograd])


# c10's default_rng_seed_val: the seed device generators start from (torch_npu's, CUDA's, and the CPU generator
# TorchAir's fake device derives its own from), whatever seed torch's CPU generator drew at start-up
DEFAULT_SEED = 67280421310721


class DeviceGenerator(torch.Generator):
    """A CPU generator that also keeps a philox-style offset, as device generators do.

    TorchAir's graph RNG state (``ge._ge_graph._GraphRngState``) reads and advances the generator's
    offset; torch's CPU generator refuses ``get_offset``."""

    def __init__(self) -> None:
        super().__init__()
        self._offset = 0

    def get_offset(self) -> int:
        return self._offset

    def set_offset(self, offset: int) -> None:
        self._offset = int(offset)


def default_generator(device_index: int = 0) -> torch.Generator:
    """The process's generator of the device (one device: any index gets it)."""
    with REGISTRY.ops_lock:
        if REGISTRY.npu_generator is None:
            gen = DeviceGenerator()
            gen.manual_seed(DEFAULT_SEED)
            REGISTRY.npu_generator = gen
        return REGISTRY.npu_generator

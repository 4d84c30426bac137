"""Python stand-in for ``_privateuse1_backend``, the fake NPU module TorchAir's system tests import.

TorchAir's CI compiles ``tests/privateuse1/privateuse1.cpp`` into this module. Importing it registers,
for the PrivateUse1 device, a no-op device guard, an allocator of CPU memory and a handful of kernels
(``empty``, ``empty_strided``, ``_copy_from``, ``fill_``, ``as_strided``, ``set_``, ``normal_``,
``scatter_update``); the module offers ``npu_device()``, ``register_hook()`` (hooks with a default
generator), ``register_generator()`` and ``default_generator(i)``.

Here the device is sim's (:mod:`airctl.sim.npu_device`): hooks, guard, and PrivateUse1 tensors over
CPU memory with real data (the C++ kernels copy and fill nothing: their tensors hold garbage). The
generator is a CPU generator that also keeps the offset the C++ one keeps
(:class:`airctl.sim.npu_device.DeviceGenerator`), which TorchAir's RNG handling reads. Not provided:
``aten::scatter_update(_)``, which the C++ module defines as test-only ops (its kernels return the
input unchanged) and no test at fced8842 calls.
"""

from __future__ import annotations

import torch

from airctl.sim import npu_device as _device

_device.register()


def npu_device() -> torch.device:
    """The fake device, index 0 (``privateuseone:0``; ``npu:0`` once the backend is renamed)."""
    return _device.device()


def register_hook() -> None:
    """The PrivateUse1 hooks (registered with the device, once per process)."""
    _device.register()


def register_generator() -> None:
    """Generators of the device come from :func:`default_generator` (nothing to register from Python)."""
    _device.register()


def default_generator(device_index: int) -> torch.Generator:
    """The device's default generator: c10's default seed, with an offset TorchAir can move."""
    return _device.default_generator(device_index)

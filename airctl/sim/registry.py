"""The one place airctl keeps process-wide state (everything else is passed down as a context).

Three things cannot be scoped to one run, because what they stand for is process-wide on a real
NPU too:

- **the stand-in device** (:class:`DeviceState`): stream and event ids, each thread's current
  stream, per-stream core limits, and the observers a run attaches while it lasts. torch_npu
  keeps the same in its C++ runtime, once per process;
- **the loaded TorchAir** (and the wheel's ``npugraph_ex``, which registers its own ops) and the
  stand-in C++ extension modules it was imported against:
  TorchAir is a process singleton (its Graph Engine options are set once) and keeps references
  to the modules it imported, so they are built once and put back in ``sys.modules`` for each run;
- **operator registrations** (the ``npu::`` ops of :mod:`airctl.sim.npu_ops` and
  :mod:`airctl.sim.npu_attention`, the rest of the wheel's ``npu::`` ops by schema
  (:mod:`airctl.sim.wheel_ops`), torch_npu's kernels for torch composites of
  :mod:`airctl.sim.npu_overrides`, the CPU kernels of TorchAir's ``npu_define`` collectives,
  :mod:`airctl.sim.collective_ops`; users' custom-op declarations are *not* here: they come with
  each session's context): torch cannot unregister an op that compiled code or TorchAir's pattern
  passes refer to.

Nothing here is a patch: :mod:`airctl.sim.session` installs and restores those around each run.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType, SimpleNamespace
from typing import Any

Observer = Callable[..., None]


@dataclass
class DeviceState:
    """The stand-in NPU runtime's process state (see :mod:`airctl.sim.torch_npu.npu`)."""

    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    local: threading.local = field(default_factory=threading.local)  # .stream: the thread's current stream
    stream_limits: dict[int, tuple[int, int]] = field(default_factory=dict)
    observers: list[Observer] = field(default_factory=list)
    # flags scripts set on torch.npu (torch.npu.matmul.allow_hf32 = True, ...)
    matmul: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(allow_hf32=False))
    conv: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(allow_hf32=True))
    config: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(allow_internal_format=False))
    soc: str | None = None  # the SoC a sim session stands in for (None: no session; npu_overrides then defer to torch)
    deterministic_level: int = 0  # torch_npu.npu.set_deterministic_level (TorchAir's Dynamo guard reads it)

    def notify(self, kind: str, **details: Any) -> None:
        for fn in list(self.observers):
            fn(kind, **details)

    @contextmanager
    def observing(self, fn: Observer) -> Iterator[None]:
        """Call ``fn(kind, **details)`` on every stream/event call while the block runs."""
        self.observers.append(fn)
        try:
            yield
        finally:
            if fn in self.observers:
                self.observers.remove(fn)


@dataclass
class Registry:
    device: DeviceState = field(default_factory=DeviceState)
    torchair: ModuleType | None = None  # TorchAir from the torch-npu wheel, once imported
    npugraph_ex: ModuleType | None = None  # the wheel's npugraph_ex package, once imported (sim.npugraph_ex_package)
    wheel_root: str | None = None  # where the real torch_npu wheel is installed (the stand-in hides it)
    extension_modules: dict[str, ModuleType] = field(default_factory=dict)  # name -> stand-in module
    op_libraries: list[Any] = field(default_factory=list)  # torch.library.Library objects kept alive
    overrides_registered: bool = False  # npu_overrides' aten kernels are in op_libraries
    npu_device_registered: bool = False  # PrivateUse1 hooks, guard and kernels (sim.npu_device)
    npu_generator: Any = None  # the device's default generator, once asked for (sim.npu_device)
    collective_kernels: tuple[str, ...] | None = None  # npu_define ops given CPU kernels (collective_ops)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # wheel_ops' lazy op definitions: not ``lock``, which TorchAir's import (that may reach them) holds
    ops_lock: threading.Lock = field(default_factory=threading.Lock)


REGISTRY = Registry()

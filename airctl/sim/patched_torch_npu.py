"""Patch of ``sys.modules['torch_npu']`` and ``torch.npu`` under sim: the stand-in device.

The real ``torch_npu`` needs CANN to import. For the length of a sim session ``import torch_npu``
gives :mod:`airctl.sim.torch_npu` (and its ``npu``, ``npu.utils``, ``npu.streams`` and
``profiler`` submodules), and ``torch.npu`` is its device module, as ``torch_npu`` makes it with
``torch._register_device_module`` (that call needs ``npu`` to be a device type torch knows, so
the attribute and ``sys.modules['torch.npu']`` are set directly). The stand-in also remembers
where the real wheel lives, so TorchAir can still be found inside it. The wheel's own
``torch_npu.dynamo._deterministic_guard`` is importable too: TorchAir's compile installs its Dynamo
guard on ``torch_npu.npu._get_deterministic_level()``, so a change of the level between two calls
recompiles under sim as on an NPU (``airctl why`` shows it).
"""

from __future__ import annotations

import functools
import importlib.util
from types import ModuleType

from airctl.hooks.patching import Patches


def patch(p: Patches) -> None:
    import torch

    from airctl.sim import torch_npu as standin
    from airctl.sim.torch_npu import npu as npu_mod
    from airctl.sim.torch_npu import profiler as prof_mod
    from airctl.sim.torchair_loader import torch_npu_root

    torch_npu_root()  # found (and remembered) before the stand-in hides the wheel
    p.module("torch_npu", standin)
    p.module("torch_npu.npu", npu_mod)
    p.module("torch_npu.npu.utils", npu_mod.utils)  # type: ignore[arg-type]
    p.module("torch_npu.npu.streams", npu_mod.streams)  # type: ignore[arg-type]
    p.module("torch_npu.profiler", prof_mod)
    p.setattr(torch, "npu", npu_mod)
    p.module("torch.npu", npu_mod)
    guard = deterministic_guard_module()
    if guard is not None:  # TorchAir's compile installs the wheel's own Dynamo guard on the level
        p.module("torch_npu.dynamo", _package("torch_npu.dynamo"))
        p.module(GUARD_MODULE, guard)


GUARD_MODULE = "torch_npu.dynamo._deterministic_guard"


def _package(name: str) -> ModuleType:
    mod = ModuleType(name, "sim: only the wheel's _deterministic_guard lives here")
    mod.__path__ = []  # a package, so that its submodule imports
    return mod


@functools.lru_cache(maxsize=1)
def deterministic_guard_module() -> ModuleType | None:
    """The wheel's ``torch_npu/dynamo/_deterministic_guard.py`` (it reads only ``torch_npu.npu``'s
    ``_get_deterministic_level``, which the stand-in has), loaded once per process; None when the
    wheel has no such file."""
    from airctl.sim.torchair_loader import torch_npu_root

    root = torch_npu_root()
    path = root / "dynamo" / "_deterministic_guard.py" if root is not None else None
    if path is None or not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(GUARD_MODULE, path)
    if spec is None or spec.loader is None:
        return None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

"""The wheel's ``npugraph_ex`` package under sim: ``import npugraph_ex`` and ``torch.npu.npugraph_ex``.

On an NPU host ``import torch_npu`` puts a lazy proxy at ``sys.modules['npugraph_ex']`` (the
package ships inside the wheel at ``torch_npu/dynamo/npugraph_ex``) and ``torch_npu.npu`` gives
the thin public facade ``torch_npu/npu/npugraph_ex`` (``compile_fx``, ``register_replacement``,
``scope``, ``inference``). The real wheel cannot be imported here, so a sim session loads both from
the wheel's files, once per process (:mod:`.registry`: the package registers its own op
namespace ``torch.ops.npugraph_ex``, which torch cannot unregister), and puts them at the same
names for its length. No npugraph_ex file is copied or modified.

At import npugraph_ex installs SIGINT/SIGTERM handlers and an ``atexit`` finalizer, as TorchAir
does: the handlers are not kept (:mod:`airctl.hooks.signal_handlers`), and the finalizer is
unregistered, because at exit it imports ``torch_npu`` again, outside any session (the real wheel,
which fails without CANN); it only uninstalls static kernels, which sim never installs.
"""

from __future__ import annotations

import atexit
import sys
from pathlib import Path
from types import ModuleType

from airctl.hooks import signal_handlers
from airctl.hooks.patching import Patches
from airctl.sim.registry import REGISTRY
from airctl.sim.torchair_loader import load_package, torch_npu_root

PACKAGE = "npugraph_ex"
FACADE = "torch_npu.npu.npugraph_ex"


def npugraph_ex_dir(root: Path) -> Path | None:
    """The wheel's npugraph_ex folder (None for a wheel built without it)."""
    path = root / "dynamo" / PACKAGE
    return path if (path / "__init__.py").is_file() else None


def load(root: Path) -> tuple[ModuleType, ModuleType] | None:
    """The package and its ``torch.npu`` facade, imported once per process (the stand-ins must be in
    place: npugraph_ex imports ``torch_npu``). None when the wheel has no npugraph_ex."""
    with REGISTRY.lock:
        if REGISTRY.npugraph_ex is not None:
            return REGISTRY.npugraph_ex, REGISTRY.extension_modules[FACADE]
        path = npugraph_ex_dir(root)
        if path is None:
            return None
        with signal_handlers.kept():
            package = load_package(PACKAGE, path)
            facade = load_package(FACADE, root / "npu" / PACKAGE)
        for name in (PACKAGE, FACADE):  # each session puts them back (and takes them away) itself
            sys.modules.pop(name, None)
        finalize = getattr(package, "_finalize", None)
        if finalize is not None:
            atexit.unregister(finalize)
        REGISTRY.npugraph_ex = package
        REGISTRY.extension_modules[FACADE] = facade
        return package, facade


def patch(p: Patches) -> ModuleType | None:
    """``npugraph_ex`` and ``torch.npu.npugraph_ex`` for the session (after the torch_npu stand-in)."""
    root = torch_npu_root()
    loaded = load(root) if root is not None else None
    if loaded is None:
        return None
    package, facade = loaded
    p.module(PACKAGE, package)
    p.module(FACADE, facade)
    p.setattr(sys.modules["torch_npu.npu"], PACKAGE, facade)
    return package

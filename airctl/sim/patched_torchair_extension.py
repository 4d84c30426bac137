"""Patch of ``sys.modules`` for TorchAir's C++ extensions: ``torchair.core._torchair`` and
``torchair.core._npu_graph_executor`` become the stand-ins of :mod:`airctl.sim.torchair_core`.

``torchair/core`` has no ``__init__``, so TorchAir's ``from . import _torchair`` resolves through
``sys.modules``. The stand-in modules are built once per process and kept in the registry:
TorchAir holds on to the objects it imported, so every session must hand back the same ones.
"""

from __future__ import annotations

from airctl.hooks.patching import Patches
from airctl.sim import torchair_core
from airctl.sim.registry import REGISTRY


def patch(p: Patches) -> None:
    built = REGISTRY.extension_modules
    if not built:
        built[torchair_core.MODULE_NAME] = torchair_core.build_module()
        built[torchair_core.EXECUTOR_MODULE_NAME] = torchair_core.build_executor_module()
    for name, module in built.items():
        p.module(name, module)

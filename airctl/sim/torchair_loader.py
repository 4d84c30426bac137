"""Find TorchAir inside the installed torch-npu wheel and import it as ``torchair``.

The wheel bundles TorchAir at ``torch_npu/dynamo/torchair`` and, on an NPU host, exposes it
through a lazy ``sys.modules['torchair']`` proxy that ``import torch_npu`` installs. Under sim
the real ``torch_npu`` cannot be imported (it needs CANN), so we locate the folder without
importing the wheel and load the package from there, with our ``_torchair`` stand-in already
in ``sys.modules`` (``torchair/core`` has no ``__init__``, so ``from . import _torchair``
resolves through ``sys.modules``). No TorchAir file is copied or modified.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from airctl.errors import BackendError
from airctl.sim.registry import REGISTRY


def torch_npu_root() -> Path | None:
    """The installed torch-npu wheel's package folder (remembered: under sim a stand-in hides it)."""
    if REGISTRY.wheel_root is None and "torch_npu" not in sys.modules:
        spec = importlib.util.find_spec("torch_npu")
        if spec is not None and spec.submodule_search_locations:
            REGISTRY.wheel_root = str(list(spec.submodule_search_locations)[0])
    return Path(REGISTRY.wheel_root) if REGISTRY.wheel_root else None


def torchair_dir() -> Path:
    root = torch_npu_root()
    if root is None:
        raise BackendError(
            "the torch-npu wheel is not installed, and TorchAir ships inside it",
            hint="pip install torch==2.13.0 torch-npu==2.13.0",
        )
    path = root / "dynamo" / "torchair"
    if not (path / "__init__.py").is_file():
        raise BackendError(
            f"torch-npu at {root} has no bundled TorchAir (dynamo/torchair)",
            hint="install a torch-npu wheel built with TorchAir (the default), e.g. torch-npu==2.13.0",
        )
    return path


def load_torchair(path: Path) -> ModuleType:
    """Import the package at ``path`` as top-level ``torchair`` and return it."""
    existing = sys.modules.get("torchair")
    if existing is not None and getattr(existing, "__file__", None) == str(path / "__init__.py"):
        return existing  # imported already (by an earlier session, or TorchAir's own lazy proxy)
    return load_package("torchair", path)


def load_package(name: str, path: Path) -> ModuleType:
    """Import the package folder ``path`` as ``name`` (in ``sys.modules``; taken out again if it fails)."""
    spec = importlib.util.spec_from_file_location(name, path / "__init__.py",
                                                  submodule_search_locations=[str(path)])
    if spec is None or spec.loader is None:
        raise BackendError(f"cannot load {name} from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        for key in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
            del sys.modules[key]
        raise
    return module

"""Make ``import torch`` work wherever airctl runs.

Once the ``torch-npu`` wheel is installed, torch auto-loads it on import through the
``torch.backends`` entry point; without CANN that load fails and takes ``import torch`` down
with it (reference/spike.md §2). airctl therefore sets ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``
before torch is imported whenever CANN is not usable, for itself and for the user scripts it
runs in-process (and, through ``os.environ``, for their child processes). On a machine with
CANN nothing is changed and the real ``torch_npu`` loads as usual.

Nothing here imports torch.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

AUTOLOAD_VAR = "TORCH_DEVICE_BACKEND_AUTOLOAD"
CANN_HOME_VARS = ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_OPP_PATH")
CANN_PROBE_LIBS = ("libhccl.so", "libascendcl.so", "libge_runner.so")


@dataclass(frozen=True)
class CannStatus:
    available: bool
    reason: str
    home: str | None = None


def installed_version(dist: str) -> str | None:
    """The version of distribution ``dist`` installed here (``torch-npu`` or ``torch_npu`` alike), or None:
    from package metadata, nothing imported."""
    import importlib.metadata as md  # not at start-up: `airctl --help` does not ask

    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def torch_npu_installed() -> bool:
    """True when the torch-npu wheel is installed (found without importing it)."""
    return importlib.util.find_spec("torch_npu") is not None


def cann_status() -> CannStatus:
    """Whether CANN's shared libraries can be loaded here, and why (not)."""
    home = next((os.environ[v] for v in CANN_HOME_VARS if os.environ.get(v)), None)
    missing = []
    for lib in CANN_PROBE_LIBS:
        try:
            ctypes.CDLL(lib)
        except OSError:
            missing.append(lib)
    if not missing:
        return CannStatus(True, "CANN libraries load (" + ", ".join(CANN_PROBE_LIBS) + ")", home)
    if home is None:
        reason = "no CANN toolkit: " + ", ".join(missing) + " not loadable and ASCEND_TOOLKIT_HOME unset"
    else:
        reason = f"CANN at {home} but {', '.join(missing)} not loadable (source set_env.sh?)"
    return CannStatus(False, reason, home)


def ensure_torch_importable() -> str | None:
    """Set TORCH_DEVICE_BACKEND_AUTOLOAD=0 when torch-npu is installed but CANN is not usable.

    Returns a sentence describing what was done (for ``airctl doctor`` and logs), or None.
    Respects a value the user set explicitly.
    """
    if os.environ.get(AUTOLOAD_VAR) is not None:
        return None
    if not torch_npu_installed():
        return None
    status = cann_status()
    if status.available:
        return None
    os.environ[AUTOLOAD_VAR] = "0"
    return f"set {AUTOLOAD_VAR}=0: torch-npu is installed but {status.reason}"


def torchair_attr(module: str, name: str) -> Any:
    """``name`` of TorchAir's already loaded module ``module`` (``"ge._ge_graph"``), under either name
    TorchAir goes by (``torchair.*``: the alias torch_npu and sim install; ``torch_npu.dynamo.torchair.*``:
    its place in the wheel); None when neither is loaded or has it. Imports nothing."""
    for prefix in ("torchair.", "torch_npu.dynamo.torchair."):
        value = getattr(sys.modules.get(prefix + module), name, None)
        if value is not None:
            return value
    return None


@contextlib.contextmanager
def restored_environ(*keys: str) -> Iterator[dict[str, str | None]]:
    """For the block, ``os.environ`` may change ``keys`` (the block, or a library it calls): each is
    given back its value, or removed, afterwards. Yields the values they had (None: unset)."""
    saved = {k: os.environ.get(k) for k in keys}
    try:
        yield dict(saved)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

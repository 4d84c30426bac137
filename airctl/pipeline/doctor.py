"""``airctl doctor``'s diagnosis: what is installed, which backend ``auto`` picks and why, what to install.

Never imports torch: versions come from package metadata, CANN from loading its libraries.
:func:`diagnose` returns the JSON that ``airctl doctor --json`` prints.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from typing import Any

from airctl.torch_env import AUTOLOAD_VAR, cann_status, installed_version


def _dot_version() -> str | None:
    dot = shutil.which("dot")
    if dot is None:
        return None
    try:
        proc = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (proc.stderr or proc.stdout).strip()


def diagnose() -> dict[str, Any]:
    from airctl import __version__
    from airctl.backends import choose
    from airctl.errors import AirctlError

    cann = cann_status()
    torch_npu = installed_version("torch-npu")
    torchair_path = None
    if torch_npu:
        from airctl.sim.torchair_loader import torch_npu_root

        root = torch_npu_root()
        if root is not None and (root / "dynamo" / "torchair" / "__init__.py").is_file():
            torchair_path = str(root / "dynamo" / "torchair")
    try:
        choice = choose("auto")
        backend = {"name": choice.name, "reason": choice.reason}
    except AirctlError as e:
        backend = {"name": None, "reason": e.message}
    advice = []
    if installed_version("torch") is None:
        advice.append("pip install torch==2.13.0   (CPU wheel; an unpinned torch pulls a multi-GB CUDA build)")
    if torch_npu is None:
        advice.append("pip install torch-npu==2.13.0   (TorchAir ships inside it; the sim backend runs it)")
    if _dot_version() is None:
        advice.append("apt-get install graphviz   (the `dot` binary renders small graphs)")
    if not cann.available:
        advice.append("for the npu backend: install CANN and `source .../ascend-toolkit/set_env.sh`; "
                      "until then airctl uses the sim backend")
    return {
        "airctl": __version__,
        "python": platform.python_version(),
        "torch": installed_version("torch"),
        "torch_npu": torch_npu,
        "torchair": {"bundled_in_torch_npu": torch_npu, "path": torchair_path},
        "cann": {"available": cann.available, "reason": cann.reason, "home": cann.home},
        "graphviz": {"python": installed_version("graphviz"), "dot": _dot_version()},
        "chromium": shutil.which("chromium") or shutil.which("chromium-browser"),
        "env": {AUTOLOAD_VAR: os.environ.get(AUTOLOAD_VAR)},
        "backend_auto": backend,
        "advice": advice,
    }

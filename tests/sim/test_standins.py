"""The sim backend runs TorchAir's own code from the torch-npu wheel, with our stand-ins below it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_torchair_is_the_wheels_copy_and_only_hardware_layers_are_stand_ins() -> None:
    from airctl.sim.install import activate

    torchair = activate()
    import torch
    import torch_npu

    assert Path(torchair.__file__).parts[-4:] == ("torch_npu", "dynamo", "torchair", "__init__.py")
    assert getattr(sys.modules["torchair.core._torchair"], "__airctl_standin__", False)
    assert getattr(torch_npu, "__airctl_standin__", False)
    assert torch.npu is torch_npu.npu
    # TorchAir's own modules, not ours
    import torchair.npu_fx_compiler as compiler

    assert "site-packages/torch_npu/dynamo/torchair" in compiler.__file__
    # the air ops TorchAir registers exist with its schemas
    assert str(torch.ops.air.scope_enter.default._schema).startswith("air::scope_enter(str[] keys, str[] values")


def test_npu_device_word_maps_to_cpu() -> None:
    from airctl.sim.install import activate

    activate()
    import torch

    t = torch.ones(2).npu()
    assert t.device.type == "cpu" and t.is_npu is False
    assert torch.zeros(2, device="npu").device.type == "cpu"
    assert torch.nn.Linear(2, 2).to("npu:0").weight.device.type == "cpu"


def test_torchair_own_validation_errors_come_through() -> None:
    from airctl.sim.install import activate

    torchair = activate()
    config = torchair.CompilerConfig()
    try:
        config.mode = "fastest"
    except ValueError as e:
        assert "not in optional list" in str(e)
    else:  # pragma: no cover
        raise AssertionError("TorchAir accepted an invalid mode")


def test_import_torch_works_in_a_fresh_process_via_airctl() -> None:
    """torch-npu is installed without CANN: airctl sets TORCH_DEVICE_BACKEND_AUTOLOAD=0 before torch loads."""
    code = "import os; from airctl.torch_env import ensure_torch_importable; ensure_torch_importable(); " \
           "import torch; print(os.environ.get('TORCH_DEVICE_BACKEND_AUTOLOAD'), torch.__version__)"
    env = {k: v for k, v in __import__("os").environ.items() if k != "TORCH_DEVICE_BACKEND_AUTOLOAD"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == "0"

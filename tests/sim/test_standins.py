"""The sim backend runs TorchAir's own code from the torch-npu wheel, with our stand-ins below it,
and a sim session leaves the process as it found it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MODELS, REPO


def _session():
    from airctl.backends.sim import sim_context
    from airctl.pipeline.run.execution import RunExecution
    from airctl.sim.session import session

    return session(sim_context(RunExecution()))


def test_torchair_is_the_wheels_copy_and_only_hardware_layers_are_stand_ins() -> None:
    with _session() as torchair:
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
    import torch

    with _session():
        t = torch.ones(2).npu()
        assert t.device.type == "cpu" and t.is_npu is False
        assert torch.zeros(2, device="npu").device.type == "cpu"
        assert torch.nn.Linear(2, 2).to("npu:0").weight.device.type == "cpu"
    assert not hasattr(torch.Tensor, "npu") and not hasattr(torch, "npu")


def test_torchair_own_validation_errors_come_through() -> None:
    with _session() as torchair:
        config = torchair.CompilerConfig()
        try:
            config.mode = "fastest"
        except ValueError as e:
            assert "not in optional list" in str(e)
        else:  # pragma: no cover
            raise AssertionError("TorchAir accepted an invalid mode")


def _patched_surface() -> dict[str, object]:
    """Every attribute and sys.modules entry a sim compile patches, by identity."""
    import torch
    from torch._dynamo.backends import registry

    from airctl.sim.session import load_torchair
    from airctl.sim.torch_npu import profiler

    load_torchair()
    import torchair
    from torchair._acl_concrete_graph.acl_graph import AclGraph
    from torchair._acl_concrete_graph.fx2acl_converter import AclConcreteGraph
    from torchair._ge_concrete_graph.fx2ge_converter import GeConcreteGraph
    from torchair._utils.graph_transform_observer import GraphTransformObserver

    surface: dict[str, object] = {}
    for cls, names in ((GeConcreteGraph, ("__call__", "save_fx_graph", "dump")),
                       (AclConcreteGraph, ("save_fx_graph", "dump", "optimize_graph_without_runtime")),
                       (AclGraph, ("fx_run_eagerly",)),
                       (GraphTransformObserver, ("apply_gm_pass", "apply_gegraph_pass", "dump_gm", "dump_gegraph")),
                       (torch.Tensor, ("to", "npu")), (torch.nn.Module, ("to", "npu"))):
        for name in names:
            surface[f"{cls.__qualname__}.{name}"] = cls.__dict__.get(name, "<absent>")
    for name in ("zeros", "ones", "empty", "randn", "tensor", "npu"):
        surface[f"torch.{name}"] = getattr(torch, name, "<absent>")
    for name in ("get_npu_backend", "get_compiler"):
        surface[f"torchair.{name}"] = getattr(torchair, name)
    surface["torch_npu.profiler.tensorboard_trace_handler"] = profiler.tensorboard_trace_handler
    for name in ("torch_npu", "torch_npu.npu", "torch_npu.profiler", "torch.npu", "torchair.core._torchair"):
        surface[f"sys.modules[{name}]"] = sys.modules.get(name, "<absent>")
    for name in ("npu", "npugraph_ex"):
        surface[f"dynamo backend {name}"] = registry._COMPILER_FNS.get(name, "<absent>")
    return surface


def test_a_compile_and_a_script_run_restore_every_patched_attribute(tmp_path: Path) -> None:
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.pipeline.script.runner import RunRequest, run_script
    from airctl.pipeline.target import Target

    before = _patched_surface()
    assert before["sys.modules[torch_npu]"] == "<absent>" and before["torch.npu"] == "<absent>"
    result = compile_model(CompileRequest.of(MODELS / "seed.py", out_dir=tmp_path, backend="sim", report=False))
    assert result.error is None and result.index.to_json()["graphs"], result.error
    after = _patched_surface()
    assert {k: v for k, v in after.items() if before[k] is not v} == {}
    script = tmp_path / "script.py"
    script.write_text("import torch, torch_npu, torchair\n"
                      "f = torch.compile(lambda x: x.abs() + 1, backend=torchair.get_npu_backend())\n"
                      "print(f(torch.ones(2).npu()))\n", encoding="utf-8")
    run = run_script(RunRequest(Target(script, backend="sim"), out_dir=tmp_path, report=False))
    assert run.exit_code == 0, run.end
    assert {k: v for k, v in _patched_surface().items() if before[k] is not v} == {}


@pytest.mark.slow
def test_import_torch_works_in_a_fresh_process_via_airctl() -> None:
    """torch-npu is installed without CANN: airctl sets TORCH_DEVICE_BACKEND_AUTOLOAD=0 before torch loads."""
    code = "import os; from airctl.torch_env import ensure_torch_importable; ensure_torch_importable(); " \
           "import torch; print(os.environ.get('TORCH_DEVICE_BACKEND_AUTOLOAD'), torch.__version__)"
    env = {k: v for k, v in __import__("os").environ.items() if k != "TORCH_DEVICE_BACKEND_AUTOLOAD"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == "0"

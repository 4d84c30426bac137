"""Put the sim stand-ins in place and import TorchAir from the torch-npu wheel.

``activate()`` is idempotent and process-wide (TorchAir itself is a process singleton: its
Graph Engine options can be set once per process). After it returns:

- ``import torch_npu`` gives :mod:`airctl.sim.torch_npu`, and ``torch.npu`` its device module;
- ``import torchair`` gives TorchAir's own package from the wheel, backed by
  :mod:`airctl.sim.torchair_core`;
- Dynamo backends ``"npu"`` and ``"npugraph_ex"`` are registered as torch_npu registers them;
- GE graphs "run" by executing the FX graph TorchAir converted on the multi-stream executor
  (one CPU thread per stream, :mod:`airctl.execute`), and aclgraph forwards (reduce-overhead,
  which runs eagerly under sim) run their final FX graph on the same executor.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from airctl.torch_env import ensure_torch_importable

_active = False
_fx_executor: list[Callable[[Any, Sequence[Any], str], Sequence[Any]]] = []


def _default_execute_fx(gm: Any, args: Sequence[Any], name: str) -> Sequence[Any]:
    """Run the converted FX graph on the multi-stream executor with GE's meaning of the air ops.

    Every stream a ``_user_stream_label`` scope names runs on its own thread, cross-stream data
    edges are synchronised as GE does, ``air.wait_tensor`` is the identity (GE's ``Identity``
    plus a control edge), and races are reported (:mod:`airctl.execute`).
    """
    from airctl.execute.sim_hooks import execute_ge

    return execute_ge(gm, args, name)


def set_fx_executor(fn: Callable[[Any, Sequence[Any], str], Sequence[Any]] | None) -> None:
    """Replace how converted FX graphs execute (the multi-stream executor plugs in here)."""
    _fx_executor[:] = [fn] if fn else []


def _execute_fx(gm: Any, args: Sequence[Any], name: str) -> Sequence[Any]:
    fn = _fx_executor[0] if _fx_executor else _default_execute_fx
    return fn(gm, args, name)


def _register_modules() -> None:
    import torch

    from airctl.sim import torch_npu as standin
    from airctl.sim import torchair_core
    from airctl.sim.torch_npu import npu as npu_mod
    from airctl.sim.torch_npu import profiler as prof_mod
    from airctl.sim.torchair_loader import torch_npu_root

    root = torch_npu_root()
    if root is not None:
        standin.__airctl_wheel_root__ = str(root)
    sys.modules.setdefault(torchair_core.MODULE_NAME, torchair_core.build_module())
    sys.modules.setdefault(torchair_core.EXECUTOR_MODULE_NAME, torchair_core.build_executor_module())
    sys.modules["torch_npu"] = standin
    sys.modules["torch_npu.npu"] = npu_mod
    sys.modules["torch_npu.npu.utils"] = npu_mod.utils  # type: ignore[assignment]
    sys.modules["torch_npu.npu.streams"] = npu_mod.streams  # type: ignore[assignment]
    sys.modules["torch_npu.profiler"] = prof_mod
    # torch.npu is what torch_npu registers with torch._register_device_module; that call needs
    # "npu" to be a device type torch knows, so the attribute and module entry are set directly.
    torch.npu = npu_mod
    sys.modules["torch.npu"] = npu_mod


def _register_backends(torchair: Any) -> None:
    from torch._dynamo.backends.registry import _BACKENDS, _COMPILER_FNS, register_backend

    def npu_backend(gm, example_inputs, **kwargs):
        return torchair.get_npu_backend()(gm, example_inputs, **kwargs)

    def npugraph_ex_backend(gm, example_inputs, **kwargs):
        config = torchair.CompilerConfig()
        config.mode = "npugraph_ex"
        return torchair.get_npu_backend(compiler_config=config)(gm, example_inputs, **kwargs)

    for name, fn in (("npu", npu_backend), ("npugraph_ex", npugraph_ex_backend)):
        _BACKENDS.pop(name, None)
        _COMPILER_FNS.pop(name, None)
        register_backend(fn, name)


def activate() -> Any:
    """Install the stand-ins (once) and return the ``torchair`` module."""
    global _active
    if _active:
        return sys.modules["torchair"]
    ensure_torch_importable()
    import torch  # noqa: F401

    from airctl.sim import npu_device, npu_ops, patched_ge_concrete_graph_call
    from airctl.sim.torchair_loader import load_torchair, torchair_dir

    path = torchair_dir()
    npu_device.install()
    npu_ops.register()
    _register_modules()
    torchair = load_torchair(path)
    _register_backends(torchair)
    patched_ge_concrete_graph_call.install(_execute_fx)
    from airctl.execute.sim_hooks import install_aclgraph

    install_aclgraph()  # reduce-overhead under sim: aclgraph forwards run on the same executor
    _active = True
    return torchair


def is_active() -> bool:
    return _active

"""A sim session: the stand-ins in place and TorchAir patched, for the length of a ``with`` block.

>>> with session(SimContext(run_ge=my_executor)) as torchair:      # doctest: +SKIP
...     compiled = torch.compile(model, backend=torchair.get_npu_backend())
...     compiled(x)                                                # GE graphs run on my_executor

While it lasts:

- ``import torch_npu`` gives :mod:`airctl.sim.torch_npu` and ``torch.npu`` its device module
  (:mod:`.patched_torch_npu`), and TorchAir's C++ extensions are our stand-ins
  (:mod:`.patched_torchair_extension`);
- ``import torchair`` gives TorchAir's own package from the torch-npu wheel (imported once per
  process: :mod:`.registry`), and ``import npugraph_ex`` / ``torch.npu.npugraph_ex`` the wheel's
  npugraph_ex (:mod:`.npugraph_ex_package`);
- the device word ``npu`` maps to the CPU (:mod:`.patched_torch_device_word`);
- process groups asked for HCCL get gloo (:mod:`.patched_torch_distributed`), and TorchAir's
  ``npu_define`` collectives have CPU kernels (:mod:`.collective_ops`);
- Dynamo backends ``"npu"`` and ``"npugraph_ex"`` exist (:mod:`.patched_dynamo_backends`);
- a GE graph "runs" by executing the FX graph TorchAir converted with ``ctx.run_ge``
  (:mod:`.patched_ge_concrete_graph_call`), or, when none stands behind it (``torchair.ge``'s
  graph API, ``cache_compile``), its own GE ops on the same executors (:mod:`.ge_graph_runner`);
  and an aclgraph forward (reduce-overhead under sim
  runs eagerly) its final FX graph with ``ctx.run_acl`` (:mod:`.patched_acl_graph`; npugraph_ex's
  keeping its capture bookkeeping: :mod:`.patched_npugraph_ex_acl_graph`);
- the stand-in device is a SoC (``ctx.soc``): torch_npu's kernels for torch composites
  (:mod:`.npu_overrides`: SDPA, one_hot) follow that chip's branches;
- CANN's op registry answers from ``ctx.ascend_ir`` (custom ops the user declared, and
  keyword-form ``torchair.ge.custom_op`` calls: :mod:`.ascend_ir`, :mod:`.patched_ge_custom_op`).

On exit every patched attribute and ``sys.modules`` entry is restored. What stays is what the
registry documents: the loaded TorchAir package, the ``npu::`` and ``npu_define`` op
registrations, and the stand-in device's ids. TorchAir's import does not keep the SIGTERM and
SIGINT handlers it installs (:mod:`airctl.hooks.signal_handlers`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from airctl.hooks import signal_handlers
from airctl.hooks.patching import Patches
from airctl.sim import (
    collective_ops,
    ge_graph_runner,
    npu_device,
    npugraph_ex_package,
    patched_acl_graph,
    patched_dynamo_backends,
    patched_ge_concrete_graph_call,
    patched_ge_custom_op,
    patched_npugraph_ex_acl_graph,
    patched_register_device_module,
    patched_torch_accelerator,
    patched_torch_device_word,
    patched_torch_distributed,
    patched_torch_npu,
    patched_torchair_extension,
    torchair_core,
    wheel_ops,
)
from airctl.sim.ascend_ir import AscendIr
from airctl.sim.registry import REGISTRY
from airctl.torch_env import ensure_torch_importable

RunGraph = Callable[[Any, Sequence[Any], str], Any]


@dataclass
class SimContext:
    """How converted graphs execute in this session: ``(graph_module, args, graph_name) -> outputs``."""

    run_ge: RunGraph  # max-autotune: the FX graph a GE graph was converted from
    run_acl: RunGraph | None = None  # aclgraph forwards; None: TorchAir's own eager path
    run_npugraph_ex: RunGraph | None = None  # npugraph_ex's (aclgraph semantics, its name in messages); None: run_acl
    # the SoC whose torch_npu kernels sim follows (npu_sdpa); None: $AIRCTL_SIM_SOC, else npu_sdpa.DEFAULT_SOC
    soc: str | None = None
    # CANN's op registry for custom ops (ascend_ir.AscendIr: declarations beside the model); None: empty
    ascend_ir: Any = None
    collective_timeout_s: float | None = None  # default process-group timeout (multi-rank runs)


def session_soc(ctx: SimContext) -> str:
    """The SoC of a session; an unknown name is refused with the names sim knows."""
    from airctl.errors import AirctlError
    from airctl.sim.npu_sdpa import DEFAULT_SOC, SOC_ENV, SOCS, soc_path

    soc = ctx.soc or os.environ.get(SOC_ENV) or DEFAULT_SOC
    try:
        soc_path(soc)
    except ValueError as e:
        raise AirctlError(str(e), hint=f"set {SOC_ENV} to one of: {', '.join(SOCS)}") from e
    return soc


def load_torchair() -> ModuleType:
    """Import TorchAir from the torch-npu wheel (once per process) with the stand-ins in place for
    the import only; registers ``torch.ops.air.*`` and the ``npu::`` ops. Returns the package."""
    with REGISTRY.lock:
        if REGISTRY.torchair is not None:
            return REGISTRY.torchair
        ensure_torch_importable()
        from airctl.sim import npu_ops, npu_overrides  # import torch
        from airctl.sim.torchair_loader import load_torchair as load
        from airctl.sim.torchair_loader import torchair_dir

        path = torchair_dir()
        with Patches() as p, signal_handlers.kept():
            patched_torchair_extension.patch(p)
            patched_torch_npu.patch(p)
            npu_ops.register()
            npu_overrides.register()
            wheel_ops.register_all()  # the rest of the wheel's npu ops, by schema (their converters import)
            REGISTRY.torchair = load(path)
            collective_ops.register()
            npu_device.register()  # PrivateUse1 answers whoever renames it to npu (torch_npu does)
        return REGISTRY.torchair


@contextmanager
def session(ctx: SimContext) -> Iterator[ModuleType]:
    """The sim backend for the length of the block; yields the ``torchair`` module."""
    torchair = load_torchair()
    soc = session_soc(ctx)
    with Patches() as p:
        p.setattr(REGISTRY.device, "soc", soc)
        p.setattr(REGISTRY.device, "deterministic_level", 0)  # each session starts at the device's default
        table = ctx.ascend_ir if ctx.ascend_ir is not None else AscendIr()
        patched_torchair_extension.patch(p)
        patched_torch_npu.patch(p)
        patched_register_device_module.patch(p)  # a script's own torch.npu registration keeps the stand-in
        patched_torch_accelerator.patch(p)  # ... and a stub it puts at torch.npu still lets Dynamo start
        p.module("torchair", torchair)
        npugraph_ex = npugraph_ex_package.patch(p)
        patched_torch_device_word.patch(p)
        patched_torch_distributed.patch(p, ctx.collective_timeout_s)
        patched_dynamo_backends.patch(p, torchair)
        patched_ge_concrete_graph_call.patch(p, ctx.run_ge)
        # GE graphs no FX graph stands behind run on the same executors (ge_graph_runner.py)
        p.setattr(torchair_core.TorchNpuGraphBase, ge_graph_runner.RUN_FX_ATTR, ctx.run_ge)
        p.setattr(REGISTRY.extension_modules[torchair_core.MODULE_NAME], "get_registered_ir_def",
                  functools.partial(torchair_core.registered_ir_def, table))
        patched_ge_custom_op.patch(p, table)
        p.setattr(REGISTRY.extension_modules[torchair_core.MODULE_NAME], "check_cann_compat",
                  functools.partial(torchair_core.cann_compat, table))  # CANN's compat check, same table
        if ctx.run_acl is not None:
            patched_acl_graph.patch(p, ctx.run_acl)
            if npugraph_ex is not None:  # npugraph_ex's copy of the aclgraph runtime
                patched_npugraph_ex_acl_graph.patch(p, ctx.run_npugraph_ex or ctx.run_acl)
        yield torchair

"""A sim session: the stand-ins in place and TorchAir patched, for the length of a ``with`` block.

>>> with session(SimContext(run_ge=my_executor)) as torchair:      # doctest: +SKIP
...     compiled = torch.compile(model, backend=torchair.get_npu_backend())
...     compiled(x)                                                # GE graphs run on my_executor

While it lasts:

- ``import torch_npu`` gives :mod:`airctl.sim.torch_npu` and ``torch.npu`` its device module
  (:mod:`.patched_torch_npu`), and TorchAir's C++ extensions are our stand-ins
  (:mod:`.patched_torchair_extension`);
- ``import torchair`` gives TorchAir's own package from the torch-npu wheel (imported once per
  process: :mod:`.registry`);
- the device word ``npu`` maps to the CPU (:mod:`.patched_torch_device_word`);
- process groups asked for HCCL get gloo (:mod:`.patched_torch_distributed`), and TorchAir's
  ``npu_define`` collectives have CPU kernels (:mod:`.collective_ops`);
- Dynamo backends ``"npu"`` and ``"npugraph_ex"`` exist (:mod:`.patched_dynamo_backends`);
- a GE graph "runs" by executing the FX graph TorchAir converted with ``ctx.run_ge``
  (:mod:`.patched_ge_concrete_graph_call`), and an aclgraph forward (reduce-overhead under sim
  runs eagerly) its final FX graph with ``ctx.run_acl`` (:mod:`.patched_acl_graph`).

On exit every patched attribute and ``sys.modules`` entry is restored. What stays is what the
registry documents: the loaded TorchAir package, the ``npu::`` and ``npu_define`` op
registrations, and the stand-in device's ids. TorchAir's import does not keep the SIGTERM and
SIGINT handlers it installs (:mod:`.patched_signal_handlers`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from airctl.sim import (
    collective_ops,
    patched_acl_graph,
    patched_dynamo_backends,
    patched_ge_concrete_graph_call,
    patched_signal_handlers,
    patched_torch_device_word,
    patched_torch_distributed,
    patched_torch_npu,
    patched_torchair_extension,
)
from airctl.sim.patching import Patches
from airctl.sim.registry import REGISTRY
from airctl.torch_env import ensure_torch_importable

RunGraph = Callable[[Any, Sequence[Any], str], Any]


@dataclass
class SimContext:
    """How converted graphs execute in this session: ``(graph_module, args, graph_name) -> outputs``."""

    run_ge: RunGraph  # max-autotune: the FX graph a GE graph was converted from
    run_acl: RunGraph | None = None  # aclgraph forwards; None: TorchAir's own eager path
    collective_timeout_s: float | None = None  # default process-group timeout (multi-rank runs)


def load_torchair() -> ModuleType:
    """Import TorchAir from the torch-npu wheel (once per process) with the stand-ins in place for
    the import only; registers ``torch.ops.air.*`` and the ``npu::`` ops. Returns the package."""
    with REGISTRY.lock:
        if REGISTRY.torchair is not None:
            return REGISTRY.torchair
        ensure_torch_importable()
        from airctl.sim import npu_ops  # imports torch
        from airctl.sim.torchair_loader import load_torchair as load
        from airctl.sim.torchair_loader import torchair_dir

        path = torchair_dir()
        with Patches() as p, patched_signal_handlers.kept():
            patched_torchair_extension.patch(p)
            patched_torch_npu.patch(p)
            npu_ops.register()
            REGISTRY.torchair = load(path)
            collective_ops.register()
        return REGISTRY.torchair


@contextmanager
def session(ctx: SimContext) -> Iterator[ModuleType]:
    """The sim backend for the length of the block; yields the ``torchair`` module."""
    torchair = load_torchair()
    with Patches() as p:
        patched_torchair_extension.patch(p)
        patched_torch_npu.patch(p)
        p.module("torchair", torchair)
        patched_torch_device_word.patch(p)
        patched_torch_distributed.patch(p, ctx.collective_timeout_s)
        patched_dynamo_backends.patch(p, torchair)
        patched_ge_concrete_graph_call.patch(p, ctx.run_ge)
        if ctx.run_acl is not None:
            patched_acl_graph.patch(p, ctx.run_acl)
        yield torchair

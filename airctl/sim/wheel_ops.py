"""``torch_npu.<name>`` under sim: every ``torch.ops.npu`` op the wheel registers, by the wheel's schema.

The real ``torch_npu`` exports each ``torch.ops.npu`` op at top level, and libraries import them
by name (transformers: ``from torch_npu import npu_fusion_attention`` as soon as an NPU is
available). The stand-in answers ``torch_npu.<name>`` lazily, from the installed wheel's surface
(:mod:`airctl.sim.wheel_surface`):

- an op sim already registers (:mod:`airctl.sim.npu_ops`, :mod:`airctl.sim.npu_attention`,
  TorchAir's ``npu_define`` collectives) is returned as registered, kernels and all;
- any other op is defined in the ``npu`` namespace with the wheel's schema(s), and a CPU kernel
  that raises saying sim has no kernel for it (an NPU computes it; airctl does not make numbers
  up). Importing, ``hasattr`` and ``torch.ops.npu.<op>`` lookups work; calling it says why not.

The definitions are process-wide (torch cannot unregister an op): their ``Library`` objects are
kept in :data:`airctl.sim.registry.REGISTRY` with sim's other op registrations.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from airctl.sim.registry import REGISTRY
from airctl.sim.wheel_surface import installed_surface

# names torch_npu's exports add that are not ops -> why sim leaves them out (tests/sim/test_wheel_surface.py)
LEFT_OUT: dict[str, str] = {
    "HiFloat8Tensor": "a tensor subclass for the HiFloat8 format of Ascend hardware; no CPU arithmetic for it",
    "erase_stream": "frees a tensor's memory from a stream's caching pool; sim has no device memory",
    "matmul_checksum": "silent-data-corruption checks of the NPU's cube unit (torch_npu.asd); hardware-only",
}
# the real wheel also sets torch.<op> for every op, as a wrapper that raises a deprecation error:
# sim leaves torch untouched (it is the user's torch as well), so torch.<op> stays an AttributeError.

_OVERLOAD = re.compile(r"^([A-Za-z0-9_.]+)\(")


def _no_kernel(name: str):
    def kernel(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"sim: torch_npu.{name} is an NPU kernel airctl has no CPU version of (it is defined with "
            "the torch-npu wheel's schema so that libraries import it); run it on an NPU (--backend npu)"
        )

    return kernel


def npu_op(name: str, schemas: tuple[str, ...]) -> Any:
    """``torch.ops.npu.<name>``, defined from ``schemas`` first when sim has not registered it."""
    from airctl.sim import npu_ops

    npu_ops.register()  # sim's own kernels first (idempotent): they must not find a schema-only op in the way
    with REGISTRY.ops_lock:
        if hasattr(torch.ops.npu, name):
            return getattr(torch.ops.npu, name)
        lib = torch.library.Library("npu", "FRAGMENT")
        REGISTRY.op_libraries.append(lib)
        for schema in schemas:
            overload = _OVERLOAD.match(schema)
            try:
                lib.define(schema)
                lib.impl(overload.group(1) if overload else name, _no_kernel(name), "CPU")
            except RuntimeError:
                continue  # a schema this torch cannot parse: the op keeps the overloads it could
        if hasattr(torch.ops.npu, name):
            return getattr(torch.ops.npu, name)
        return _no_kernel(name)


def top_level(name: str) -> Any:
    """What ``torch_npu.<name>`` is under sim; an ``AttributeError`` (with why) for names it is not."""
    surface = installed_surface()
    if name in surface.npu_ops:
        return npu_op(name, surface.npu_ops[name])
    if name in LEFT_OUT:
        raise AttributeError(f"torch_npu.{name} exists in the torch-npu wheel but not under airctl's sim: "
                             f"{LEFT_OUT[name]}")
    raise AttributeError(f"module 'torch_npu' has no attribute {name!r}")


def top_level_names() -> list[str]:
    """The ops ``dir(torch_npu)`` lists under sim (those the wheel exports)."""
    return sorted(installed_surface().npu_ops)


def register_all() -> list[str]:
    """Define every op of the wheel sim has not registered (once per process), as ``import torch_npu`` does
    on an NPU: TorchAir's converter modules for ``npu_*`` ops look their op up when imported and are
    skipped when it is missing. Returns the ops it could not define (schemas this torch cannot parse)."""
    failed = []
    for name, schemas in installed_surface().npu_ops.items():
        if not callable(getattr(npu_op(name, schemas), "default", None)) and not hasattr(torch.ops.npu, name):
            failed.append(name)
    return failed

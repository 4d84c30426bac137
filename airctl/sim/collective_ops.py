"""CPU kernels for TorchAir's ``npu_define`` collective ops, so graphs that use them run under sim.

TorchAir rewrites some ``torch.distributed`` calls into ops of its own ``npu_define`` library
(``dist.broadcast``, ``dist.send``/``recv``, ``dist.all_to_all(_single)``, the uneven all-gather
and reduce-scatter; docs/multi-rank.md has the table) and registers kernels for them only for
``Meta`` and ``PrivateUse1`` (the NPU). Their PrivateUse1 bodies are plain ``torch.distributed``
calls, which work on CPU tensors over gloo; registering those same functions (TorchAir's own,
named here, not copied) for the CPU is all the sim backend needs. Without it the converted graph
fails with ``Could not run 'npu_define::broadcast' with arguments from the 'CPU' backend``.

The library object lives in :data:`~airctl.sim.registry.REGISTRY` (torch drops kernels when it is
garbage-collected, and compiled graphs keep calling them).
"""

from __future__ import annotations

import importlib

from airctl.sim.registry import REGISTRY

PACKAGE = "torchair._ge_concrete_graph.ge_converter.experimental"
# TorchAir module -> (npu_define op, TorchAir's PrivateUse1 function)
KERNELS = {
    "hcom_allgather": (("allgather_in_tensor", "allgather_in_tensor_npu"),
                       ("_allgather_in_tensor_shape", "_allgather_in_tensor_shape_npu"),
                       ("allgather_in_tensor_uneven", "allgather_in_tensor_uneven_npu")),
    "hcom_alltoall": (("all_to_all_single_npu", "npu_all_to_all_single_npu"),),
    "hcom_reducescatter": (("reduce_scatter_tensor_uneven", "reduce_scatter_tensor_uneven_npu"),),
    "hcom_send_recv": (("_send", "send_npu"), ("_recv", "recv_npu")),
    "hcom_broadcast": (("broadcast", "broadcast_npu"),),
}


def register() -> list[str]:
    """Register the CPU kernels once per process, right after TorchAir's import (the caller,
    :func:`airctl.sim.session.load_torchair`, holds the registry's lock); returns the ops done."""
    import torch

    if REGISTRY.collective_kernels is not None:
        return list(REGISTRY.collective_kernels)
    done: list[str] = []
    lib = torch.library.Library("npu_define", "IMPL")
    for module_name, pairs in KERNELS.items():
        try:
            module = importlib.import_module(f"{PACKAGE}.{module_name}")
        except ImportError:  # another TorchAir version: the ops it has are registered
            continue
        for op, function in pairs:
            fn = getattr(module, function, None)
            if fn is not None and hasattr(torch.ops.npu_define, op):
                lib.impl(op, fn, "CPU")
                done.append(op)
    REGISTRY.op_libraries.append(lib)
    REGISTRY.collective_kernels = tuple(done)
    return done

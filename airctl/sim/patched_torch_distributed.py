"""Patch of ``torch.distributed.init_process_group`` and ``new_group`` under sim: HCCL becomes gloo.

A TorchAir script asks for the NPU's collective library, ``init_process_group("hccl")``, which
does not exist without torch_npu and CANN (``Unknown backend type hccl``). Under sim the
collectives run on CPU tensors, over gloo, so the backend name is rewritten: ``"hccl"`` ->
``"gloo"``, ``"npu:hccl"`` -> ``"cpu:gloo"``. TorchAir needs nothing more: for a process group
whose default device is the CPU it records the group in the GE graph as
``tag=<group>;rank_list=<ranks>`` (on an NPU, the HCCL communicator's name), and its converters
emit the same ``Hcom*`` ops. Registering a real backend called "hccl" that wraps gloo does not
work: TorchAir then asks it for an NPU communicator name.

Two more arguments are adjusted, only when the script leaves them unset or NPU-specific:

- ``timeout``: ``SimContext.collective_timeout_s`` when given (multi-rank runs: a divergence
  fails after that many seconds instead of gloo's 30 minutes);
- ``device_id``: an NPU device (``"npu:0"``) is dropped, the CPU has no device index.

Two warnings torch gives when TorchAir asks a gloo group for its default device
(``_get_pg_default_device`` is deprecated; "Multiple backends are registered", since gloo
registers for the CPU and CUDA) are sim artefacts, not the script's: that call is made quiet
while the session lasts (an HCCL group on an NPU gives neither). A warnings filter would not do:
Dynamo records the warnings raised while it compiles and shows them again afterwards.
"""

from __future__ import annotations

import datetime
import functools
import inspect
from typing import Any

from airctl.hooks.patching import Patches


def gloo_backend(backend: Any) -> Any:
    """The backend string with HCCL replaced by gloo (anything else unchanged).

    >>> gloo_backend("hccl"), gloo_backend("cpu:gloo,npu:hccl"), gloo_backend("gloo"), gloo_backend(None)
    ('gloo', 'cpu:gloo', 'gloo', None)
    """
    if not isinstance(backend, str) or "hccl" not in backend.lower():
        return backend
    if ":" not in backend:
        return "gloo"
    parts: dict[str, None] = {}
    for item in backend.split(","):
        device, _, name = item.strip().partition(":")
        parts.setdefault("cpu:gloo" if name.lower() == "hccl" else f"{device}:{name}", None)
    return ",".join(parts)


def _adjusted(original: Any, timeout_s: float | None) -> Any:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind_partial(*args, **kwargs)
        given = bound.arguments
        if "backend" in given:
            given["backend"] = gloo_backend(given["backend"])
        if timeout_s is not None and given.get("timeout") is None and "timeout" in signature.parameters:
            given["timeout"] = datetime.timedelta(seconds=timeout_s)
        device = given.get("device_id")
        if device is not None and "npu" in str(device):
            given["device_id"] = None
        return original(*bound.args, **bound.kwargs)

    return call


def _quiet(original: Any) -> Any:
    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("ignore", FutureWarning)
            return original(*args, **kwargs)

    return call


def patch(p: Patches, collective_timeout_s: float | None = None) -> None:
    import torch.distributed as dist
    from torch.distributed import distributed_c10d as c10d

    if not dist.is_available():
        return
    if hasattr(c10d, "_get_pg_default_device"):
        p.setattr(c10d, "_get_pg_default_device", _quiet(c10d._get_pg_default_device))
    for name in ("init_process_group", "new_group"):
        wrapped = _adjusted(getattr(c10d, name), collective_timeout_s)
        p.setattr(c10d, name, wrapped)
        p.setattr(dist, name, wrapped)

"""Patch of torch's device word handling under sim: ``.npu()``, ``.to("npu")``, ``device="npu"``.

Moving a tensor or module to ``npu`` keeps it on the CPU, where the sim backend computes, as long as
``npu`` is only a word to torch. Once a script has renamed torch's PrivateUse1 backend to ``npu`` (as
torch_npu does, and TorchAir's own tests do), ``npu`` is a device — sim's, registered by
:mod:`airctl.sim.npu_device`, whose tensors live in CPU memory — and nothing is mapped;
factory calls with ``device="npu"`` are mapped the same way, and ``Tensor.is_npu`` exists (False:
the data really is on the CPU). ``torch.device("npu")`` itself is not supported: it would need
torch's PrivateUse1 backend renamed, which makes torch believe an accelerator is present (and
``torch.accelerator``, which Dynamo queries on every frame, would report one it cannot drive).

Everything is undone when the sim session ends (:class:`~airctl.hooks.patching.Patches`). Dynamo's
rule map (``torch._dynamo.trace_rules``) resolves ``torch.ones`` and the other factories by name
when it is built; ``init_process_group`` clears it, so a compile after that, inside a session,
builds it with this session's wrappers. Kept past the session, the next session's wrappers would
call a ``torch.ones`` the map no longer knows, and Dynamo would break the graph at every factory
call. So the map is built (if it was cleared) before the factories are wrapped, and dropped when
the session ends if it holds the session's wrappers.
"""

from __future__ import annotations

import functools
from typing import Any

from airctl.hooks.patching import Patches

FACTORIES = (
    "empty zeros ones full rand randn randint arange linspace tensor as_tensor eye "
    "zeros_like ones_like empty_like full_like rand_like randn_like"
).split()


def npu_is_a_device() -> bool:
    """Whether the script made ``npu`` torch's name for PrivateUse1 (as torch_npu does): then sim's
    registered device (:mod:`.npu_device`) holds ``npu`` tensors and the word is not mapped."""
    import torch

    return torch._C._get_privateuse1_backend_name() == "npu"


def is_npu(dev: Any) -> bool:
    """Whether ``dev`` is the device *word* ``npu`` that sim maps to the CPU."""
    import torch

    if npu_is_a_device():
        return False
    if isinstance(dev, str):
        return dev == "npu" or dev.startswith("npu:")
    if isinstance(dev, torch.device):
        return dev.type == "npu"
    return False


def map_device(dev: Any) -> Any:
    """``npu``/``npu:N``/``torch.device('npu')`` -> ``cpu``; anything else unchanged."""
    return "cpu" if is_npu(dev) else dev


def _map_call(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    args = tuple(map_device(a) for a in args)
    if "device" in kwargs:
        kwargs = dict(kwargs, device=map_device(kwargs["device"]))
    return args, kwargs


def _mapping_to(original: Any) -> Any:
    @functools.wraps(original)
    def to(self, *args, **kwargs):
        args, kwargs = _map_call(args, kwargs)
        return original(self, *args, **kwargs)

    return to


def _mapping_factory(original: Any) -> Any:
    @functools.wraps(original)
    def factory(*args, **kwargs):
        if "device" in kwargs and is_npu(kwargs["device"]):
            kwargs = dict(kwargs, device="cpu")
        return original(*args, **kwargs)

    return factory


def _is_npu_get(self: Any) -> bool:
    own = getattr(self, "_airctl_is_npu", None)
    return self.device.type == "npu" if own is None else own


def _is_npu_set(self: Any, value: Any) -> None:
    self._airctl_is_npu = value


# ``Tensor.is_npu``: whether the tensor is on ``npu``; a script may still set it on one tensor
# (``t.is_npu = True``, as TorchAir's tests do without torch_npu) and read its own value back
IS_NPU = property(_is_npu_get, _is_npu_set)


def _stay(self, device=None, non_blocking=False, **kwargs):  # Tensor.npu / Module.npu: already "there"
    if npu_is_a_device():  # ... unless npu is a device: go there
        return self.to("npu" if device is None else torch_device("npu", device), non_blocking=non_blocking)
    return self


def torch_device(kind: str, index: Any) -> Any:
    import torch

    return index if isinstance(index, torch.device | str) else torch.device(kind, int(index))


def _trace_rules() -> Any:
    import sys

    rules = sys.modules.get("torch._dynamo.trace_rules")
    return rules if rules is not None and hasattr(rules, "get_torch_obj_rule_map") else None


def _forget(wrappers: list[Any]) -> None:
    """Drop Dynamo's rule map if it was built with these wrappers (see the module docstring)."""
    rules = _trace_rules()
    if rules is None or rules.get_torch_obj_rule_map.cache_info().currsize == 0:
        return
    known = rules.get_torch_obj_rule_map()
    if any(w in known for w in wrappers):
        rules.clear_lru_cache()


def patch(p: Patches) -> None:
    """Map the device word ``npu`` to the CPU until ``p`` is restored."""
    import torch

    rules = _trace_rules()
    if rules is not None:
        rules.get_torch_obj_rule_map()  # with torch's own factories (cached: free unless cleared since)
    wrappers: list[Any] = []
    p.defer(lambda: _forget(wrappers))  # runs after the factories are back
    if not hasattr(torch.Tensor, "is_npu"):
        p.setattr(torch.Tensor, "is_npu", IS_NPU)
    p.setattr(torch.Tensor, "npu", _stay)
    p.setattr(torch.nn.Module, "npu", _stay)
    p.setattr(torch.Tensor, "to", _mapping_to(torch.Tensor.to))
    p.setattr(torch.nn.Module, "to", _mapping_to(torch.nn.Module.to))
    for name in FACTORIES:
        original = getattr(torch, name, None)
        if original is not None:
            wrappers.append(_mapping_factory(original))
            p.setattr(torch, name, wrappers[-1])

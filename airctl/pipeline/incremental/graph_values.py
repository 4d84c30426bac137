"""The values of a kept graph's nodes as JSON and back (:mod:`.graph_codec`): arguments, ops, classes.

Nodes are written by name, numbers as they are (non-finite ones as text), dtypes, devices, memory
formats, layouts and slices by name; an ATen op by its qualified name (``aten::mm.default``); a
class or function by module and qualified name. Anything else raises :class:`Unsupported`.
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
from typing import Any

SCRIPT = "<script>"  # the model script's own module: its name is made per process (pipeline/run/model_script)


class Unsupported(Exception):  # noqa: N818 - a reason, not an error of the user's
    """The graph has something this codec does not write faithfully: compile in full."""


@functools.lru_cache(maxsize=4096)  # a graph names the same few classes and functions on every node
def resolve(module: str, qualname: str, script: str = "") -> Any:
    """The object ``module.qualname`` names (:data:`SCRIPT`: the model script's module)."""
    if module == SCRIPT:
        module = script
    obj: Any = sys.modules.get(module)  # a kept file never makes a module import: what it names is loaded
    if obj is None:
        raise Unsupported(f"{module} is not loaded")
    for part in qualname.replace("_VariableFunctionsClass.", "").split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise Unsupported(f"{module}.{qualname} is not there")
    return obj


def op_name(target: Any) -> str | None:
    import torch

    if isinstance(target, torch._ops.OpOverload):
        return f"{target._schema.name}.{target._overloadname or 'default'}"
    return None


def op_of(name: str) -> Any:
    """``aten::mm.default`` -> ``torch.ops.aten.mm.default``."""
    import torch

    qual, _, overload = name.rpartition(".")
    with contextlib.suppress(Unsupported):
        target = getattr(packet_of(qual), overload, None)
        if isinstance(target, torch._ops.OpOverload):
            return target
    raise Unsupported(f"no op {name} in this torch")


def packet_of(name: str) -> Any:
    """``_c10d_functional::all_reduce`` -> ``torch.ops._c10d_functional.all_reduce`` (an op's overload packet,
    as ``source_fn_stack`` names a collective: its ``__module__`` is no module one could import)."""
    import torch

    ns, _, op = name.partition("::")
    packet = getattr(getattr(torch.ops, ns), op, None)
    if not isinstance(packet, torch._ops.OpOverloadPacket):
        raise Unsupported(f"no op {name} in this torch")
    return packet


def encode_value(v: Any) -> Any:
    import torch

    if isinstance(v, torch.fx.Node):
        return {"n": v.name}
    if v is None or isinstance(v, (bool, str)) or (isinstance(v, int) and not isinstance(v, bool)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"f": repr(v)}
    if isinstance(v, (list, tuple)):
        return {"l" if isinstance(v, list) else "t": [encode_value(x) for x in v]}
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return {"d": [[k, encode_value(x)] for k, x in v.items()]}
    if isinstance(v, torch.dtype):
        return {"dtype": str(v).removeprefix("torch.")}
    if isinstance(v, torch.device):
        return {"device": str(v)}
    if isinstance(v, torch.memory_format):
        return {"memory_format": str(v).removeprefix("torch.")}
    if isinstance(v, torch.layout):
        return {"layout": str(v).removeprefix("torch.")}
    if isinstance(v, slice):
        return {"slice": [encode_value(v.start), encode_value(v.stop), encode_value(v.step)]}
    raise Unsupported(f"an argument of type {type(v).__name__}")


def decode_value(v: Any, nodes: dict[str, Any]) -> Any:
    import torch

    if not isinstance(v, dict):
        return v
    (kind, x), = v.items()
    if kind == "n":
        return nodes[x]
    if kind == "f":
        return float(x)
    if kind in ("l", "t"):
        items = [decode_value(i, nodes) for i in x]
        return items if kind == "l" else tuple(items)
    if kind == "d":
        return {k: decode_value(i, nodes) for k, i in x}
    if kind == "slice":
        return slice(*(decode_value(i, nodes) for i in x))
    if kind in ("dtype", "memory_format", "layout"):
        found = getattr(torch, x, None)
        if found is None:
            raise Unsupported(f"no torch.{x}")
        return found
    if kind == "device":
        return torch.device(x)
    raise Unsupported(f"unknown value kind {kind!r}")


def val_check(val: Any) -> Any:
    import torch

    if isinstance(val, torch.Tensor):
        return [list(val.shape), list(val.stride()), str(val.dtype), val.storage_offset(), val.requires_grad]
    if isinstance(val, (list, tuple)):
        return [val_check(v) for v in val]
    if val is None or isinstance(val, (bool, int, float)):
        return val
    raise Unsupported(f"a value of type {type(val).__name__}")

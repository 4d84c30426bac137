"""The meta of a kept graph's nodes as JSON and back (:mod:`.graph_codec`).

Written: ``stack_trace``, ``seq_nr``, ``partitioner_tag``, ``output_stack_traces`` as they are;
``nn_module_stack`` (each class checked against the live model's module at its path),
``source_fn_stack``, ``original_aten``, ``from_node``, AOT's descriptors (``desc``) and custom ops'
``eager_input_vals`` (made fake again in the graph's fake mode); ``val`` and ``tensor_meta`` are
recomputed, with a check of each value's shape, strides, dtype, offset and ``requires_grad``.
A key not listed raises :class:`~.graph_values.Unsupported`: it is never dropped.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from airctl.pipeline.incremental.graph_values import (
    SCRIPT,
    Unsupported,
    decode_value,
    encode_value,
    op_name,
    op_of,
    packet_of,
    resolve,
    val_check,
)

PLAIN_META = ("stack_trace", "seq_nr", "partitioner_tag", "output_stack_traces")
DERIVED_META = ("val", "tensor_meta")  # recomputed by fake-tensor propagation
DESCRIPTORS = "torch._functorch._aot_autograd.descriptors"


def _qualified(obj: Any, script: str = "") -> list[str]:
    module = str(getattr(obj, "__module__", None) or "")
    return [SCRIPT if script and module == script else module, str(getattr(obj, "__qualname__", ""))]


def encode_meta(node: Any, script: str) -> dict[str, Any]:
    import torch

    meta = node.meta
    out: dict[str, Any] = {"keys": list(meta)}
    for key, v in meta.items():
        if key in DERIVED_META:
            continue
        if key in PLAIN_META:
            out[key] = v
        elif key == "nn_module_stack":
            out[key] = [[k, path, *_qualified(cls, script)] for k, (path, cls) in v.items()]
        elif key == "source_fn_stack":
            out[key] = [[name, "str", fn, ""] if isinstance(fn, str) else [name, "op", fn._qualified_op_name, ""]
                        if isinstance(fn, torch._ops.OpOverloadPacket) else [name, "obj", *_qualified(fn, script)]
                        for name, fn in v]
        elif key == "original_aten":
            out[key] = op_name(v)
        elif key == "from_node":
            out[key] = [s.to_dict() for s in v]
        elif key == "desc":
            out[key] = _desc(v)
        elif key == "eager_input_vals":  # the custom op's input values as traced: fakes made again
            out[key] = fakes_out(v)
        else:
            raise Unsupported(f"meta {key!r} of node {node.name}")
    if "val" in meta:
        out["val_check"] = val_check(meta["val"])
    return out


def _desc(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_desc(x) for x in v]
    if not dataclasses.is_dataclass(v) or type(v).__module__ != DESCRIPTORS:
        raise Unsupported(f"an AOT descriptor {type(v).__name__}")
    fields = {f.name: getattr(v, f.name) for f in dataclasses.fields(v)}
    return {"class": type(v).__name__, "fields": {k: _desc(x) if dataclasses.is_dataclass(x) else encode_value(x)
                                                  for k, x in fields.items()}}


def _undesc(v: Any) -> Any:
    if isinstance(v, list):
        return [_undesc(x) for x in v]
    cls = resolve(DESCRIPTORS, v["class"])
    return cls(**{k: _undesc(x) if isinstance(x, dict) and "class" in x else decode_value(x, {})
                  for k, x in v["fields"].items()})


def fakes_out(v: Any) -> Any:
    import torch

    if isinstance(v, torch.Tensor):
        return {"fake": [*val_check(v), str(v.device)]}
    if isinstance(v, (list, tuple)):
        return {"l" if isinstance(v, list) else "t": [fakes_out(x) for x in v]}
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return {"d": [[k, fakes_out(x)] for k, x in v.items()]}
    return encode_value(v)


def fakes_in(v: Any, mode: Any) -> Any:
    import torch

    if isinstance(v, dict) and "fake" in v:
        shape, stride, dtype, offset, grad, device = v["fake"]
        with mode:
            t = torch.empty_strided(shape, stride, dtype=getattr(torch, dtype.removeprefix("torch.")), device=device)
        if offset:
            raise Unsupported("an eager input value at an offset")
        return t.requires_grad_(grad) if grad else t
    if isinstance(v, dict) and len(v) == 1 and next(iter(v)) in ("l", "t", "d"):
        (kind, items), = v.items()
        if kind == "d":
            return {k: fakes_in(x, mode) for k, x in items}
        made = [fakes_in(x, mode) for x in items]
        return made if kind == "l" else tuple(made)
    return decode_value(v, {})


def decode_meta(raw: dict[str, Any], model: Any, script: str,
                classes: dict[tuple[str, str, str], type] | None = None) -> dict[str, Any]:
    """A node's meta from :func:`encode_meta`'s JSON; ``classes``: the module classes found so far, by
    (path, module, qualname), shared by a graph's nodes (most nodes name the same few dozen modules)."""
    import torch.fx.traceback as fx_traceback

    classes = {} if classes is None else classes

    meta: dict[str, Any] = {}
    for key in raw["keys"]:
        if key in DERIVED_META:
            meta[key] = None  # filled by check_vals, in this order
            continue
        v = raw[key]
        if key == "nn_module_stack":
            meta[key] = {}
            for k, path, mod, qual in v:
                cls = classes.get((path, mod, qual))
                if cls is None:
                    cls = classes[path, mod, qual] = _module_class(model, path, mod, qual, script)
                meta[key][k] = (path, cls)
        elif key == "source_fn_stack":
            meta[key] = [(name, _source_fn(kind, mod, qual, script)) for name, kind, mod, qual in v]
        elif key == "original_aten":
            meta[key] = op_of(v) if v is not None else None
        elif key == "from_node":
            meta[key] = [fx_traceback.NodeSource._from_dict(d) for d in v]
        elif key == "desc":
            meta[key] = _undesc(v)
        elif key == "eager_input_vals":
            meta[key] = v  # made fake again by check_vals, in the graph's fake mode
        else:
            meta[key] = v
    return meta


def _source_fn(kind: str, module: str, qualname: str, script: str) -> Any:
    """A ``source_fn_stack`` entry's function: a name (``str``), an op's packet (``op``), else an object."""
    if kind == "str":
        return module
    return packet_of(module) if kind == "op" else resolve(module, qualname, script)


def _module_class(model: Any, path: str, module: str, qualname: str, script: str) -> type:
    """The class of the module at ``path`` (``L['self'].layers.0``) in the live model, which must be
    the class written; else the class by its import name."""
    sub = path.removeprefix("L['self']").lstrip(".")
    try:
        found = model.get_submodule(sub) if hasattr(model, "get_submodule") else None
    except AttributeError:
        found = None
    if found is not None and _qualified(type(found), script) == [module, qualname]:
        return type(found)
    cls = resolve(module, qualname, script)
    if not isinstance(cls, type):
        raise Unsupported(f"{module}.{qualname} is not a class")
    return cls

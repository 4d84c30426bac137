"""Read a live ``torch.fx`` GraphModule (or Graph) into airctl's graph model.

Streams follow TorchAir's scope rule (reference/torchair.md §2.1): a node between
``air.scope_enter(keys, values)`` carrying ``_user_stream_label`` and its ``scope_exit`` runs
on that label; with nested scopes the innermost label is the one its ops carry (R10). Source
lines come from ``node.meta["stack_trace"]`` (the user's innermost frame), module paths from
``nn_module_stack``. Torch is only touched through the objects passed in.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from airctl.graph.model import STREAM_LABEL, Graph, Node, is_stream_op
from airctl.io.gc_pause import without_gc
from airctl.io.json_io import non_finite_text
from airctl.io.paths import AIRCTL_PACKAGE

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def target_name(target: Any) -> str:
    """``torch.ops.aten.mm.default`` -> ``aten.mm.default``; builtins -> their name."""
    if isinstance(target, str):
        return target
    name = getattr(target, "name", None)
    if callable(name) and hasattr(target, "_schema"):  # OpOverload
        schema_name = target._schema.name  # "aten::mm"
        overload = target._overloadname or "default"
        return f"{schema_name.replace('::', '.')}.{overload}"
    if hasattr(target, "_qualified_op_name"):  # OpOverloadPacket
        return str(target._qualified_op_name).replace("::", ".")
    module = getattr(target, "__module__", "") or ""
    qual = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    if module in ("_operator", "operator", "builtins"):
        return qual
    qual = qual.replace("_VariableFunctionsClass.", "")  # torch.mm, as torch.fx prints it
    return f"{module}.{qual}" if module else qual


def _jsonable(value: Any, node_cls: type) -> Any:
    if isinstance(value, node_cls):
        return "%" + value.name
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, node_cls) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v, node_cls) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):  # as the JSON snapshot keeps it
        return non_finite_text(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def _not_the_callers(path: str) -> bool:
    """A frame no node's source line should point at: torch.distributed's internals, or airctl's own code."""
    return "/torch/distributed/" in path.replace("\\", "/") or path.startswith(AIRCTL_PACKAGE)


def source_of(meta: dict) -> str | None:
    trace = meta.get("stack_trace")
    if not trace:
        return None
    frames = _FRAME.findall(trace)
    if not frames:
        return None
    # a collective's innermost frames are torch.distributed's own (Dynamo traces into them), and a
    # call through a sim stand-in (the device word's factory wrappers, torch_npu's kernels) has
    # airctl's frames innermost: the line that matters is the user's (or the library's) call
    user = [f for f in frames if not _not_the_callers(f[0])]
    path, line = (user or frames)[-1]
    return f"{path}:{line}"


# Dynamo names a module by the source it reached it from: the root model is ``L['self']`` when
# the model's own forward is compiled, ``L['args'][0]`` when a decorator's ``wrapper(*args)``
# stands in front of it (transformers' models), ``L['model']`` in a step function, ``G['model']``
# for a global. Paths are relative to that root, as users write them (``model.layers.*.mlp``).
_ROOT = re.compile(r"^[LG](?:\[[^\]]*\])+\.?")


def module_of(meta: dict) -> str | None:
    stack = meta.get("nn_module_stack")
    if not stack:
        return None
    last = list(stack.values())[-1]
    path = last[0] if isinstance(last, (tuple, list)) else str(last)
    path = re.sub(r"\._modules\['([^']+)'\]", r".\1", str(path))
    path = _ROOT.sub("", path)
    return path.lstrip(".") or None


def _tensor_meta(meta: dict) -> dict[str, Any]:
    val = meta.get("val", meta.get("tensor_meta"))
    vals = val if isinstance(val, (list, tuple)) else [val]
    out = []
    for v in vals:
        shape = getattr(v, "shape", None)
        dtype = getattr(v, "dtype", None)
        if shape is None or dtype is None:
            continue
        dims = [d if isinstance(d, int) else str(d) for d in shape]
        out.append({"shape": dims, "dtype": str(dtype).replace("torch.", "")})
    if not out:
        return {}
    return {"tensors": out}


def _made_by(meta: dict, found: dict[str, Any]) -> dict[str, Any]:
    """``found`` plus ``pass``: the YAML pass that inserted the node (passes/builtin.py tags its
    nodes ``airctl_pass``), so ``passes fix`` can wait on a scope's own record."""
    made = meta.get("airctl_pass")
    return {**found, "pass": made} if isinstance(made, str) else found


def scope_stream(args: tuple) -> str | None:
    """The stream label a ``scope_enter`` node opens, or None for non-stream scopes."""
    if len(args) < 2:
        return None
    keys, values = args[0], args[1]
    if not isinstance(keys, (list, tuple)) or not isinstance(values, (list, tuple)):
        return None
    for k, v in zip(keys, values, strict=False):  # TorchAir zips too: unequal lengths truncate (R5)
        if k == STREAM_LABEL:
            return str(v)
    return None


@without_gc
def fx_digest(gm: Any) -> str:
    """A digest of what a pass can change in a GraphModule (or Graph): every node's name, opcode,
    target, arguments and keyword arguments, in graph order (so streams, which scopes tell, too).

    About ten times cheaper than :func:`read_fx`, so the pass runner takes it around every pass
    and reads the graph only when it changed. ``node.meta`` (shapes, stack traces) is not part
    of it: a pass that only edits meta counts as unchanged. ``repr`` of an argument names a node
    by its name, and is stable for other objects within one process, which is all change
    detection needs.
    """
    fx_graph = gm.graph if hasattr(gm, "graph") else gm
    h = hashlib.blake2b(digest_size=16)
    h.update("\x1e".join(f"{n.name}\x1f{n.op}\x1f{n.target!r}\x1f{n.args!r}\x1f{n.kwargs!r}"
                         for n in fx_graph.nodes).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@without_gc  # thousands of nodes, no cycles: no collection while reading (airctl/io/gc_pause.py)
def read_fx(gm: Any, name: str = "graph") -> Graph:
    """Build a :class:`Graph` (dialect ``fx``) from a GraphModule or a ``torch.fx.Graph``."""
    import torch.fx

    fx_graph = gm.graph if hasattr(gm, "graph") else gm
    nodes: list[Node] = []
    for fx_node in fx_graph.nodes:
        op = fx_node.op
        tname = target_name(fx_node.target) if op in ("call_function", "call_method", "call_module", "get_attr") else op
        attrs: dict[str, Any] = {}
        if op in ("call_function", "call_method", "call_module", "output"):
            attrs["args"] = _jsonable(fx_node.args, torch.fx.Node)
            if fx_node.kwargs:
                attrs["kwargs"] = _jsonable(dict(fx_node.kwargs), torch.fx.Node)
        elif op == "get_attr":
            attrs["target"] = str(fx_node.target)
        nodes.append(Node(
            name=fx_node.name,
            op=tname,
            inputs=[n.name for n in fx_node.all_input_nodes],
            attrs=attrs,
            source=source_of(fx_node.meta),
            module=module_of(fx_node.meta),
            kind=op,
            meta=_made_by(fx_node.meta, _tensor_meta(fx_node.meta)),
        ))
    assign_streams(nodes)
    return Graph(name=name, dialect="fx", nodes=nodes)


def assign_streams(nodes: list[Node]) -> None:
    """Set each FX node's ``stream`` from the scopes around it (the module docstring's rule).

    Works on the graph model alone (``op`` and the JSON-able ``attrs["args"]``), so every FX
    reader — live GraphModules, ``graph():`` listings, ``print_readable`` code — agrees.
    """
    stack: list[str | None] = []  # one entry per open scope: its stream label or None
    for node in nodes:
        if node.kind == "call_function" and is_stream_op(node.op, "scope_exit"):
            # the exit itself belongs to the scope it closes
            node.stream = next((s for s in reversed(stack) if s is not None), None)
            if stack:
                stack.pop()
            continue
        node.stream = next((s for s in reversed(stack) if s is not None), None)
        if node.kind == "call_function" and is_stream_op(node.op, "scope_enter"):
            args = node.attrs.get("args")
            stack.append(scope_stream(tuple(args) if isinstance(args, list) else ()))

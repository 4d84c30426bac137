"""Which ops of an FX graph TorchAir cannot convert to GE, all at once, before conversion tries.

TorchAir converts a graph node by node and stops at the first op it cannot convert, so a user
who fixes that op and recompiles meets the next one. This module asks TorchAir's own converter
table about every op of the graph instead, the way TorchAir looks a converter up
(``get_or_auto_gen_converter`` in ``_ge_concrete_graph/fx2ge_converter.py``), without building GE:

- **no converter**: nothing is registered for the op, and TorchAir refuses to generate one
  (its ``_generate_converter_code`` raises: an ATen/prims op, a scalar argument, an Ascend IR
  CANN does not register; its message is kept);
- **stub**: a converter is registered but its body only raises ``NotImplementedError`` (how
  TorchAir's own ``fx_summary`` tells "not implemented" from "supported": by the converter's source);
- **converter fails**: one of :data:`KNOWN_FAILURES`, converters that fail for every call in this
  wheel (checked against the op's schema, so a fixed wheel is not blamed).

Converters that raise for some arguments only are not predicted (they are found when conversion
runs). Each op is reported with its node count and first node's source line (the user's or the
library's frame: :func:`airctl.io.fx_reader.source_of`), and a known workaround where there is one.
Works on airctl's graph model (ops as ``ns.name.overload`` strings), so a ledger's snapshot will
do; TorchAir must be loaded (a sim session, or torch_npu on an NPU).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import sys
import textwrap
from dataclasses import dataclass
from typing import Any

from airctl.graph.model import Graph
from airctl.torch_env import torchair_attr

# transformers' MoE experts (integrations/moe.py): its grouped_mm path uses histc, a custom op and index_put
MOE_WORKAROUND = ('transformers MoE experts: build the model with experts_implementation="batched_mm" (or "eager"), '
                  "whose ops TorchAir converts")
# op (without overload) -> what helps elsewhere
WORKAROUNDS = {
    "aten.histc": "count with one_hot(...).sum(0) or scatter_add instead of histc",
    "aten.silu_backward": "(the backward of SiLU/SwiGLU) decompose it before conversion: in your own script, "
                          "torchair.get_npu_backend(compiler_config=config, custom_decompositions="
                          "torch._decomp.get_decompositions([torch.ops.aten.silu_backward])) run with `airctl run`; "
                          "or train with --mode reduce-overhead",
    "npu.npu_fusion_attention_grad": "(the backward of SDPA on an NPU) an NPU with this wheel stops here too "
                                     "(docs/sim.md): train with --mode reduce-overhead, or keep SDPA out of the "
                                     "graph (transformers: attn_implementation=\"eager\")",
    "aten.index_put": "write with torch.where / scatter (x = x.scatter(...)) instead of x[idx] = v",
    "aten._weight_norm_interface": "weight norm is for training: for inference fold it into the weight once "
                                   "the model is loaded, torch.nn.utils.parametrize.remove_parametrizations("
                                   "{owner}, \"weight\") (torch.nn.utils.remove_weight_norm for the old "
                                   "weight_norm); or compile with --mode reduce-overhead",
}
# a clone to another memory format than contiguous: TorchAir's aten.clone converter refuses it
CHANNELS_LAST = ("TorchAir converts only a contiguous clone: call .contiguous() on the channels_last tensor before "
                 "this line, or keep the model in the default memory format (no .to(memory_format=...))")
INTERPOLATE = ("F.interpolate keeps its channels_last input's layout with a clone TorchAir cannot convert: call "
               ".contiguous() on the tensor before F.interpolate, or keep the model in the default memory format")


def _owner(module: str | None) -> str:
    """The module a parametrization belongs to (``conv.parametrizations.weight.0`` -> ``model.conv``)."""
    head = (module or "").split(".parametrizations.", 1)[0] if module and ".parametrizations." in module else ""
    return f"model.{head}" if head else "the module"


def workaround(op: str, source: str | None, module: str | None = None) -> str | None:
    """A known way around an unconvertible op, by where it was made (the library's frame) or by the op."""
    path = (source or "").replace("\\", "/")
    if "/transformers/" in path and "moe" in path.rsplit("/", 1)[-1]:
        return MOE_WORKAROUND
    known = WORKAROUNDS.get(op.rsplit(".", 1)[0])
    return known.replace("{owner}", _owner(module)) if known else None


def _source_text(source: str | None) -> str:
    """The code of a node's ``file:line`` (one line, through Python's line cache), "" when unknown."""
    import linecache

    file, _, line = (source or "").rpartition(":")
    return linecache.getline(file, int(line))[:500] if file and line.isdigit() else ""


@functools.cache
def _clone_refuses_layouts() -> bool:
    """Whether this wheel's aten.clone converter raises for a memory format other than contiguous."""
    target = resolve_target("aten.clone.default")
    get_converter = torchair_attr("_ge_concrete_graph.fx2ge_converter", "_get_converter")
    converter = get_converter(target) if target is not None and get_converter is not None else None
    try:
        code = inspect.getsource(inspect.unwrap(converter)) if converter is not None else ""
    except (OSError, TypeError):
        return False
    return "contiguous_format" in code and "raise" in code


def _layout_clone(node: Any) -> tuple[str, str] | None:
    """(detail, workaround) of a clone to a memory format TorchAir's converter refuses, else None."""
    kwargs = node.attrs.get("kwargs") if isinstance(node.attrs, dict) else None
    fmt = kwargs.get("memory_format") if isinstance(kwargs, dict) else None
    if node.op != "aten.clone.default" or fmt in (None, "torch.contiguous_format") or not _clone_refuses_layouts():
        return None
    fix = INTERPOLATE if "interpolate" in _source_text(node.source) else CHANNELS_LAST
    return f"a clone to {str(fmt).removeprefix('torch.')} (TorchAir converts only a contiguous one)", fix


# converters that exist and are not stubs, yet fail for every call, as read from this wheel's TorchAir:
# op -> (does the installed op still have the shape that fails, why). Checked against the op's schema so
# that a wheel where it was fixed is not blamed.
KNOWN_FAILURES = {
    "npu.npu_fusion_attention_grad.default": (
        lambda target: len(target._schema.returns) == 5,
        "TorchAir's converter returns 4 GE outputs where this wheel's schema has 5 (\"The length of ge_outputs "
        "must be equal to meta_outputs\")"),
}
# kinds of node that are not ops TorchAir looks converters up for
_NOT_OPS = {"placeholder", "output", "get_attr", "getitem"}


@dataclass
class Unconvertible:
    """One op TorchAir cannot convert, over every node of the graph that calls it."""

    op: str
    reason: str  # "no converter" | "stub" | "converter fails"
    detail: str
    nodes: list[str]
    source: str | None  # the first node's source line
    workaround: str | None = None
    module: str | None = None  # the nn.Module holding the first node (``encoder.pos_conv_embed.conv``)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "reason": self.reason, "detail": self.detail, "count": len(self.nodes),
                "nodes": self.nodes[:20], "source": self.source, "module": self.module,
                "workaround": self.workaround}

    def line(self) -> str:
        where = (f" (first at {self.source}" + (f", in module {self.module}" if self.module else "") + ")"
                 if self.source else (f" (in module {self.module})" if self.module else ""))
        fix = f"; workaround: {self.workaround}" if self.workaround else ""
        return f"{self.op}: {self.reason}, {len(self.nodes)} node(s){where}: {self.detail}{fix}"


def resolve_target(op: str) -> Any:
    """``torch.ops.<ns>.<name>.<overload>`` for an op string, or None (builtins, unknown namespaces)."""
    import torch

    parts = op.split(".")
    if len(parts) != 3:
        return None
    try:
        return getattr(getattr(getattr(torch.ops, parts[0]), parts[1]), parts[2])
    except (AttributeError, RuntimeError):
        return None


def _loaded_converters() -> bool:
    """Import TorchAir's converter modules (as its backend does before converting); False without TorchAir."""
    for prefix in ("torchair.", "torch_npu.dynamo.torchair."):
        if prefix.rstrip(".") in sys.modules:
            importlib.import_module(prefix + "_ge_concrete_graph.ge_converter")
            return True
    return False


def _only_raises(fn: Any) -> str | None:
    """The message of a converter whose body (docstring aside) is one ``raise NotImplementedError(...)``."""
    fn = inspect.unwrap(fn)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.FunctionDef) else []
    body = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.unparse(body[0]):
        call = body[0].exc
        if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant):
            return str(call.args[0].value)
        return "the converter raises NotImplementedError"
    return None


def why_unconvertible(target: Any) -> tuple[str, str] | None:
    """(reason, detail) when TorchAir cannot convert ``target``, None when it can (as far as is known)."""
    get_converter = torchair_attr("_ge_concrete_graph.fx2ge_converter", "_get_converter")
    generate = torchair_attr("_ge_concrete_graph.fx2ge_converter", "_generate_converter_code")
    if get_converter is None or generate is None:
        return None
    converter = getattr(target, "_ge_converter", None) or get_converter(target)
    if converter is not None:
        stub = _only_raises(converter)
        known = KNOWN_FAILURES.get(str(target))
        if stub is None and known is not None and known[0](target):
            return "converter fails", known[1]
        return ("stub", stub) if stub else None
    try:
        generate(target)  # TorchAir's own checks for generating one (nothing is registered)
    except (RuntimeError, AssertionError, TypeError, ValueError) as e:
        return "no converter", f"no converter registered, and auto-generation refused: {str(e).splitlines()[0]}"
    return None


def same_dtype_inputs(target: Any) -> tuple[int, int] | None:
    """The positions of two inputs ``target``'s converter requires to have one dtype (its body raises when
    ``a.dtype != b.dtype``, as aten.eq.Tensor's: "Inputs data type mismatch"), or None."""
    get_converter = torchair_attr("_ge_concrete_graph.fx2ge_converter", "_get_converter")
    converter = getattr(target, "_ge_converter", None) or (get_converter(target) if get_converter else None)
    if converter is None:
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(converter))))
    except (OSError, TypeError, SyntaxError):
        return None
    func = tree.body[0] if tree.body and isinstance(tree.body[0], ast.FunctionDef) else None
    params = [a.arg for a in func.args.args] if func else []
    for stmt in ast.walk(func) if func else ():
        test = stmt.test if isinstance(stmt, ast.If) and any(isinstance(s, ast.Raise) for s in stmt.body) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotEq):
            sides = (test.left, test.comparators[0])
            names = [x.value.id for x in sides if isinstance(x, ast.Attribute) and x.attr == "dtype"
                     and isinstance(x.value, ast.Name) and x.value.id in params]
            if len(names) == 2:
                return params.index(names[0]), params.index(names[1])
    return None


def input_dtype(graph: Graph, node: Any, position: int) -> str | None:
    """The dtype airctl's graph records for ``node``'s argument at ``position`` (a node reference), or None."""
    args = node.attrs.get("args") if isinstance(node.attrs, dict) else None
    ref = args[position] if isinstance(args, list) and position < len(args) else None
    if not isinstance(ref, str) or not ref.startswith("%"):
        return None
    producer = graph.get(ref[1:])
    tensors = (producer.meta or {}).get("tensors") if producer is not None else None
    return str(tensors[0].get("dtype")) if tensors and isinstance(tensors[0], dict) else None


def mixed_dtypes(graph: Graph, node: Any, pair: tuple[int, int] | None) -> tuple[str, str] | None:
    """The two dtypes of ``node``'s inputs at ``pair`` when they differ (its converter then fails), else None."""
    if pair is None:
        return None
    a, b = input_dtype(graph, node, pair[0]), input_dtype(graph, node, pair[1])
    return (a, b) if a and b and a != b else None


MIXED_WORKAROUND = "cast one input to the other's dtype before the op (`ids.eq(mask.to(ids.dtype))`)"


def unconvertible_ops(graph: Graph) -> list[Unconvertible]:
    """Every op of ``graph`` TorchAir cannot convert, in order of first appearance: ops it has no working
    converter for, and nodes whose inputs' dtypes differ where the op's converter needs one dtype."""
    if not _loaded_converters():
        return []
    found: dict[str, Unconvertible] = {}
    verdicts: dict[str, tuple[str, str] | None] = {}
    pairs: dict[str, tuple[int, int] | None] = {}
    for node in graph.nodes:
        if node.kind not in ("call_function", "op") or node.op in _NOT_OPS:
            continue
        if node.op not in verdicts:
            target = resolve_target(node.op)
            verdicts[node.op] = why_unconvertible(target) if target is not None else None
            pairs[node.op] = same_dtype_inputs(target) if target is not None and verdicts[node.op] is None else None
        verdict, fix = verdicts[node.op], workaround(node.op, node.source, node.module)
        mixed = mixed_dtypes(graph, node, pairs[node.op]) if verdict is None else None
        layout = _layout_clone(node) if verdict is None else None
        if mixed is not None:
            verdict = ("converter fails", f"TorchAir's converter needs one dtype for both inputs, here {mixed[0]} vs "
                                          f"{mixed[1]} (\"Inputs data type mismatch\")")
            fix = fix or MIXED_WORKAROUND
        elif layout is not None:
            verdict, fix = ("converter fails", layout[0]), layout[1]
        if verdict is None:
            continue
        entry = found.get(node.op)
        if entry is None:
            entry = found[node.op] = Unconvertible(node.op, verdict[0], verdict[1], [], node.source, fix, node.module)
        entry.nodes.append(node.name)
    return list(found.values())


def summary(found: list[Unconvertible]) -> str:
    """One message naming every op: ``3 ops TorchAir cannot convert: a (2 nodes, at f.py:3), ...``."""
    parts = [f"{u.op} ({u.reason}, {len(u.nodes)} node(s)" + (f", in module {u.module}" if u.module else "")
             + (f", first at {u.source}" if u.source else "") + ")" for u in found]
    return f"{len(found)} op(s) in this graph TorchAir cannot convert: " + "; ".join(parts)

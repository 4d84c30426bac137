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
}


def workaround(op: str, source: str | None) -> str | None:
    """A known way around an unconvertible op, by where it was made (the library's frame) or by the op."""
    path = (source or "").replace("\\", "/")
    if "/transformers/" in path and "moe" in path.rsplit("/", 1)[-1]:
        return MOE_WORKAROUND
    return WORKAROUNDS.get(op.rsplit(".", 1)[0])


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


def unconvertible_ops(graph: Graph) -> list[Unconvertible]:
    """Every op of ``graph`` TorchAir cannot convert, in order of first appearance."""
    if not _loaded_converters():
        return []
    found: dict[str, Unconvertible] = {}
    verdicts: dict[str, tuple[str, str] | None] = {}
    for node in graph.nodes:
        if node.kind not in ("call_function", "op") or node.op in _NOT_OPS:
            continue
        if node.op not in verdicts:
            target = resolve_target(node.op)
            verdicts[node.op] = why_unconvertible(target) if target is not None else None
        verdict = verdicts[node.op]
        if verdict is None:
            continue
        entry = found.get(node.op)
        if entry is None:
            entry = found[node.op] = Unconvertible(node.op, verdict[0], verdict[1], [], node.source,
                                                   workaround(node.op, node.source), node.module)
        entry.nodes.append(node.name)
    return list(found.values())


def summary(found: list[Unconvertible]) -> str:
    """One message naming every op: ``3 ops TorchAir cannot convert: a (2 nodes, at f.py:3), ...``."""
    parts = [f"{u.op} ({u.reason}, {len(u.nodes)} node(s)" + (f", in module {u.module}" if u.module else "")
             + (f", first at {u.source}" if u.source else "") + ")" for u in found]
    return f"{len(found)} op(s) in this graph TorchAir cannot convert: " + "; ".join(parts)

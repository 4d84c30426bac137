"""Read FX code as ``GraphModule.print_readable`` writes it: TorchAir's TORCH_COMPILE_DEBUG stages.

Every FX file TorchAir leaves behind is this code, not a ``graph():`` listing: the
``torch_compile_debug/run_*/torchair/model__N/`` stages (``dynamo_out_graph.txt``,
``NNN_aot_forward_graph_after_<pass>.txt``), and the ``.py`` graph dumps of reduce-overhead
(reference/torchair.md §3.3, §5.1)::

    class GraphModule(torch.nn.Module):
        def forward(self, arg0_1: "f32[3, 3]"):
            # File: model.py:23 in forward, code: mm = torch.mm(x, x)
            mm: "f32[3, 3]" = torch.ops.aten.mm.default(arg0_1, arg0_1)
            scope_enter_default = torch.ops.air.scope_enter.default(['_user_stream_label'], ['stream_1'])
            record_default = torch.ops.air.record.default();  record_default = None
            getitem: "f32[3]" = split[0]
            return (add, sub)

Unlike the listing (:mod:`airctl.io.fx_listing`), strings are quoted here, so arguments read
back exactly; ``"f32[3, 3]"`` annotations give shapes and dtypes, ``# File:`` comments the source
line. The code is parsed with :mod:`ast` and never executed. One node per assignment:
``torch.ops.X(...)``/``torch.f(...)`` is ``call_function``, ``var.method(...)`` ``call_method``,
``self.sub(...)`` ``call_module``, ``self.attr`` ``get_attr``, ``x = L_x_`` names a
placeholder (Dynamo graphs), ``a[0]`` and infix operators are ``operator`` calls; ``x = None``
(FX freeing a value) is skipped. Nested ``class`` bodies (higher-order-op subgraphs) are not
read. TorchAir's AOT file starts ``class <lambda>(...)``, which is not Python; it is read as
``class _lambda``.

>>> code = 'class GraphModule(torch.nn.Module):\\n    def forward(self, x: "f32[2]"):\\n        return (x,)\\n'
>>> [(n.name, n.op, n.meta) for n in parse_fx_code(code).nodes]
[('x', 'placeholder', {'tensors': [{'shape': [2], 'dtype': 'float32'}]}), ('output', 'output', {})]
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from airctl.errors import GraphReadError
from airctl.graph.model import Graph, Node
from airctl.io.fx_listing import normalise_target
from airctl.io.fx_reader import assign_streams

HINT = "expected FX code as GraphModule.print_readable() writes it (a TORCH_COMPILE_DEBUG stage file)"
MAX_CHARS = 256 << 20
_FILE = re.compile(r"^\s*# File: (?P<path>.+?):(?P<line>\d+) in ")
_NO_TRACE = re.compile(r"^\s*# No stacktrace found")
_ANNOTATION = re.compile(r"^(?P<dtype>[a-z]+\d*[a-z0-9]*)\[(?P<dims>[^\]]*)\]")
DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16", "i8": "int8", "i16": "int16",
          "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
          "b8": "bool", "c32": "complex32", "c64": "complex64", "c128": "complex128",
          "f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2", "f8e4m3fnuz": "float8_e4m3fnuz",
          "f8e5m2fnuz": "float8_e5m2fnuz"}
_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
           ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul", ast.BitAnd: "and_", ast.BitOr: "or_",
           ast.BitXor: "xor", ast.LShift: "lshift", ast.RShift: "rshift"}
_UNARY = {ast.USub: "neg", ast.UAdd: "pos", ast.Not: "not_", ast.Invert: "invert"}
_COMPARE = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
_NAMED = {"inf": math.inf, "nan": math.nan}


def is_fx_code(text: str) -> bool:
    head = text.lstrip()[:4096]
    return head.startswith("class ") and "(torch.nn.Module)" in head.split("\n", 1)[0] and "def forward(" in head


def tensor_meta(annotation: str | None) -> dict[str, Any]:
    """``"f32[3, s0]"`` -> ``{"tensors": [{"shape": [3, "s0"], "dtype": "float32"}]}`` (else {})."""
    m = _ANNOTATION.match(annotation or "")
    if m is None or m["dtype"] not in DTYPES:
        return {}
    dims = [d.strip() for d in m["dims"].split(",") if d.strip()]
    shape = [int(d) if d.lstrip("-").isdigit() else d for d in dims]
    return {"tensors": [{"shape": shape, "dtype": DTYPES[m["dtype"]]}]}


class _Reader:
    def __init__(self, source: str, origin: str, name: str) -> None:
        self.source, self.origin, self.name = source, origin, name
        self.lines = source.split("\n")
        self.nodes: list[Node] = []
        self.vars: dict[str, str] = {}  # python variable -> node name
        self.params: dict[str, Node] = {}  # placeholders a Dynamo graph may still rename
        self.names: set[str] = set()
        self._line = 0
        self._source_now: str | None = None

    def error(self, message: str, at: ast.AST | None = None) -> GraphReadError:
        return GraphReadError(message, file=self.origin, line=getattr(at, "lineno", None), hint=HINT)

    def _comments_until(self, lineno: int) -> str | None:
        while self._line < lineno - 1 and self._line < len(self.lines):
            text = self.lines[self._line]
            m = _FILE.match(text)
            if m:
                self._source_now = f"{m['path']}:{m['line']}"
            elif _NO_TRACE.match(text):
                self._source_now = None
            self._line += 1
        return self._source_now

    # -- values -----------------------------------------------------------------------------------
    def value(self, expr: ast.expr) -> Any:
        if isinstance(expr, ast.Constant):
            return expr.value if isinstance(expr.value, (str, int, float, bool, type(None))) else repr(expr.value)
        if isinstance(expr, ast.Name):
            if expr.id in self.vars:
                return "%" + self.vars[expr.id]
            return _NAMED.get(expr.id, expr.id)
        if isinstance(expr, (ast.List, ast.Tuple)):
            return [self.value(e) for e in expr.elts]
        if isinstance(expr, ast.Dict):
            return {str(self.value(k)) if k is not None else "**": self.value(v) for k, v in zip(expr.keys, expr.values,
                                                                                                 strict=False)}
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.Constant):
            inner = self.value(expr.operand)
            if isinstance(inner, (int, float)) and not isinstance(inner, bool):
                return -inner
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.Name) \
                and expr.operand.id == "inf":
            return -math.inf
        return ast.get_source_segment(self.source, expr) or ast.dump(expr)  # device(type='cpu'), torch.float16

    def refs(self, exprs: list[ast.expr]) -> list[str]:
        found: list[str] = []
        for expr in exprs:
            for sub in ast.walk(expr):
                if isinstance(sub, ast.Name) and sub.id in self.vars:
                    found.append(self.vars[sub.id])
        return list(dict.fromkeys(found))

    # -- statements -------------------------------------------------------------------------------
    def add(self, var: str, node: Node, at: ast.AST) -> None:
        if node.name in self.names:
            raise self.error(f"{node.name!r} is assigned twice", at)
        self.names.add(node.name)
        node.source = self._comments_until(getattr(at, "lineno", 1))
        self.nodes.append(node)
        self.vars[var] = node.name

    def call(self, target: str, kind: str, args: list[ast.expr], kwargs: list[ast.keyword],
             receiver: ast.expr | None = None) -> tuple[str, str, list[str], dict[str, Any]]:
        positional = ([receiver] if receiver is not None else []) + list(args)
        attrs: dict[str, Any] = {"args": [self.value(a) for a in positional]}
        if kwargs:
            attrs["kwargs"] = {k.arg or "**": self.value(k.value) for k in kwargs}
        inputs = self.refs([*positional, *(k.value for k in kwargs)])
        return target, kind, inputs, attrs

    def expression(self, expr: ast.expr, at: ast.AST) -> tuple[str, str, list[str], dict[str, Any]] | None:
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                return self.call(func.attr, "call_module", expr.args, expr.keywords)
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.vars:
                return self.call(func.attr, "call_method", expr.args, expr.keywords, receiver=func.value)
            dotted = ast.get_source_segment(self.source, func) or ""
            return self.call(normalise_target(dotted), "call_function", expr.args, expr.keywords)
        if isinstance(expr, ast.Subscript):
            return self.call("getitem", "call_function", [expr.value, expr.slice], [])
        if isinstance(expr, ast.BinOp) and type(expr.op) in _BINOPS:
            return self.call(_BINOPS[type(expr.op)], "call_function", [expr.left, expr.right], [])
        if isinstance(expr, ast.UnaryOp) and type(expr.op) in _UNARY and not isinstance(expr.operand, ast.Constant):
            return self.call(_UNARY[type(expr.op)], "call_function", [expr.operand], [])
        if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and type(expr.ops[0]) in _COMPARE:
            return self.call(_COMPARE[type(expr.ops[0])], "call_function", [expr.left, expr.comparators[0]], [])
        return None

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Return):
            value = self.value(stmt.value) if stmt.value is not None else None
            inputs = self.refs([stmt.value] if stmt.value is not None else [])
            self.nodes.append(Node("output", "output", inputs=inputs, attrs={"args": [value]}, kind="output"))
            return
        if isinstance(stmt, ast.Expr):  # a call whose result FX did not name
            target = f"_unnamed_{len(self.nodes)}"
            self.assign(target, stmt.value, None, stmt)
            return
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            ann = stmt.annotation.value if isinstance(stmt.annotation, ast.Constant) else None
            self.assign(stmt.target.id, stmt.value, ann if isinstance(ann, str) else None, stmt)
            return
        if isinstance(stmt, ast.Assign):
            if isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
                return  # `a = b = None`: FX frees values it no longer needs
            if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                self.assign(stmt.targets[0].id, stmt.value, None, stmt)
                return
        if isinstance(stmt, (ast.Pass, ast.ClassDef)) or (isinstance(stmt, ast.Expr)
                                                          and isinstance(stmt.value, ast.Constant)):
            return
        raise self.error(f"unexpected statement: {ast.get_source_segment(self.source, stmt) or type(stmt).__name__}"
                         [:120], stmt)

    def attribute_of_self(self, value: ast.expr) -> str | None:
        """The attribute a ``get_attr`` line reads: ``a`` of ``self.a``, ``a.b`` of ``self.a.b`` as written."""
        if not isinstance(value, ast.Attribute):
            return None
        if isinstance(value.value, ast.Name):
            return value.attr if value.value.id == "self" else None
        if not isinstance(value.value, ast.Attribute):
            return None
        dotted = ast.get_source_segment(self.source, value) or ""
        return dotted[len("self."):] if dotted.startswith("self.") else None

    def assign(self, var: str, value: ast.expr, annotation: str | None, at: ast.stmt) -> None:
        if isinstance(value, ast.Name) and value.id in self.params:
            placeholder = self.params.pop(value.id)  # Dynamo: `l_x_ = L_x_` names the placeholder
            self.names.discard(placeholder.name)
            placeholder.name = var
            self.names.add(var)
            self.vars[var] = self.vars[value.id] = var
            return
        target = self.attribute_of_self(value)
        if target is not None:
            self.add(var, Node(var, target, kind="get_attr", attrs={"target": target}), at)
            return
        made = self.expression(value, at)
        if made is None:
            raise self.error(f"cannot read {var} = {ast.get_source_segment(self.source, value) or '...'}"[:160], at)
        target, kind, inputs, attrs = made
        self.add(var, Node(var, target, inputs=inputs, attrs=attrs, kind=kind, meta=tensor_meta(annotation)), at)


def _forward(tree: ast.Module, reader: _Reader) -> ast.FunctionDef:
    for top in tree.body:
        if isinstance(top, ast.ClassDef):
            for item in top.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    return item
    raise reader.error("no `class ...: def forward(self, ...)` in the file")


def parse_fx_code(text: str, origin: str = "<fx code>", name: str = "graph") -> Graph:
    """A ``print_readable`` text as a graph (see the module docstring)."""
    if len(text) > MAX_CHARS:
        raise GraphReadError(f"file larger than {MAX_CHARS >> 20} MiB", file=origin, hint=HINT)
    source = re.sub(r"^class <lambda>\(", "class _lambda(", text, count=1, flags=re.MULTILINE)
    try:
        tree = ast.parse(source, filename=origin)
    except SyntaxError as e:
        raise GraphReadError(f"not Python: {e.msg}", file=origin, line=e.lineno, column=e.offset, hint=HINT) from e
    except (RecursionError, MemoryError, ValueError) as e:
        raise GraphReadError(f"cannot parse: {type(e).__name__}", file=origin, line=1, hint=HINT) from e
    reader = _Reader(source, origin, name)
    forward = _forward(tree, reader)
    params = [*forward.args.posonlyargs, *forward.args.args][1:]  # skip self
    for arg in [*params, *forward.args.kwonlyargs]:
        ann = arg.annotation.value if isinstance(arg.annotation, ast.Constant) else None
        node = Node(arg.arg, "placeholder", kind="placeholder", meta=tensor_meta(ann if isinstance(ann, str) else None))
        reader.nodes.append(node)
        reader.params[arg.arg] = node
        reader.vars[arg.arg] = arg.arg
        reader.names.add(arg.arg)
    for stmt in forward.body:
        reader.statement(stmt)
    if not any(n.kind == "output" for n in reader.nodes):
        raise reader.error("forward() has no return statement", forward)
    assign_streams(reader.nodes)
    return Graph(name=name, dialect="fx", nodes=reader.nodes)

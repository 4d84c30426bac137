"""TorchAir's ``.py`` graph dumps: a replayable script of ``ge.<Op>(...)`` calls (reference/torchair.md §5.1).

They carry no control edges and no stream attributes, but they are the one GE dump with FX
provenance: ``## FX Code: <fx node>: <type> = <target>(...)`` and ``# File "...", line N`` comments
above each group of calls, and ``node_name="<GE name>"`` on every call. The script is parsed
with :mod:`ast` (never executed); comments are matched to the statements that follow them.

Also decides whether a ``.py`` file is such a dump or a user's model script
(:func:`is_torchair_py_dump`), which ``airctl dump`` needs to tell the two apart.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from airctl.errors import GraphReadError
from airctl.graph.model import Graph, Node

HINT = "expected a TorchAir .py graph dump (config.debug.graph_dump.type = 'py')"
_FX_CODE = re.compile(r"^\s*## FX Code: (?P<code>(?P<name>[\w.]+)\s*:.*?=\s*(?P<target>[\w.]+)\(.*)$")
_FILE = re.compile(r'^\s*# File "(?P<path>[^"]+)", line (?P<line>\d+)')
_GE_CALL = re.compile(r"^\s*\w+\s*=\s*ge\.\w+\(|^_ = ge\.NetOutput\(", re.MULTILINE)


def is_torchair_py_dump(text: str) -> bool:
    """True for TorchAir's py dumps (``# -*- coding`` header / ``ge.<Op>(`` calls), False for model scripts."""
    head = text.lstrip()[:200]
    if "from torchair" in text[:2000] and "ge_apis as ge" in text[:2000]:
        return True
    return head.startswith("# -*- coding") and _GE_CALL.search(text) is not None


class _Builder:
    def __init__(self, origin: str, lines: list[str]) -> None:
        self.origin = origin
        self.lines = lines
        self.nodes: list[Node] = []
        self.names: set[str] = set()
        self.vars: dict[str, str] = {}  # python variable -> GE op name
        self.const_count = 0

    def error(self, message: str, node: ast.AST) -> GraphReadError:
        return GraphReadError(message, file=self.origin, line=getattr(node, "lineno", None),
                              column=getattr(node, "col_offset", None), hint=HINT)

    def unique(self, base: str) -> str:
        name = base if base not in self.names else f"{base}_{self.const_count}"
        while name in self.names:
            self.const_count += 1
            name = f"{base}_{self.const_count}"
        return name

    def refs(self, value: ast.expr, ctx: dict[str, Any]) -> list[str] | None:
        """Input references in a call argument, or None when the argument is a plain attribute."""
        if isinstance(value, ast.Name):
            if value.id not in self.vars:
                raise self.error(f"name {value.id!r} used before it is defined", value)
            return [f"{self.vars[value.id]}:0"]
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) \
                and isinstance(value.slice, ast.Constant) and isinstance(value.slice.value, int):
            if value.value.id not in self.vars:
                raise self.error(f"name {value.value.id!r} used before it is defined", value)
            return [f"{self.vars[value.value.id]}:{value.slice.value}"]
        if isinstance(value, ast.Constant) and value.value is None:
            return [""]  # absent optional input
        if isinstance(value, ast.Call) and _ge_op(value) is not None:
            return [f"{self.call(value, None, ctx)}:0"]
        if isinstance(value, (ast.List, ast.Tuple)) and value.elts and all(
                self._is_ref(e) for e in value.elts):
            out: list[str] = []
            for e in value.elts:
                out += self.refs(e, ctx) or []
            return out
        return None

    def _is_ref(self, e: ast.expr) -> bool:
        return isinstance(e, (ast.Name, ast.Subscript)) or (isinstance(e, ast.Call) and _ge_op(e) is not None)

    def call(self, call: ast.Call, target: str | None, ctx: dict[str, Any]) -> str:
        op = _ge_op(call) or ""
        inputs: list[str] = []
        control: list[str] = []
        attrs: dict[str, Any] = {}
        name: str | None = None
        const_args: list[Any] = []
        for arg in call.args:
            refs = self.refs(arg, ctx)
            if refs is None:
                const_args.append(_literal(arg))
            else:
                inputs += refs
        for kw in call.keywords:
            if kw.arg == "node_name":
                if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)):
                    raise self.error("node_name must be a string", kw.value)
                name = kw.value.value
            elif kw.arg == "dependencies":
                refs = self.refs(kw.value, ctx) if not (isinstance(kw.value, ast.List) and not kw.value.elts) else []
                control += [r.rsplit(":", 1)[0] for r in refs or []]
            elif kw.arg is not None:
                refs = self.refs(kw.value, ctx) if self._is_ref(kw.value) else None
                if refs is not None:
                    inputs += refs
                else:
                    attrs[kw.arg] = _literal(kw.value)
        if const_args:
            attrs["value" if op == "Const" else "args"] = const_args[0] if op == "Const" else const_args
        if name is None:
            name = self.unique(op or "op")  # inline ge.Const(...) has no node_name
        if name in self.names:
            raise self.error(f"duplicate node_name {name!r}", call)
        self.names.add(name)
        meta: dict[str, Any] = {"py_line": call.lineno}
        if ctx.get("fx_node"):
            meta.update({"fx_node": ctx["fx_node"], "fx_target": ctx["fx_target"], "fx_code": ctx["fx_code"]})
        self.nodes.append(Node(name=name, op=op, inputs=inputs, control_inputs=control, attrs=attrs,
                               source=ctx.get("source"), kind="op", meta=meta))
        if target is not None:
            self.vars[target] = name
        return name


def _ge_op(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "ge":
        return f.attr
    return None


def _literal(value: ast.expr) -> Any:
    try:
        result = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ast.unparse(value)
    if isinstance(result, tuple):
        return list(result)
    if isinstance(result, (bytes, complex, set, frozenset)):
        return repr(result)
    return result


def _context(lines: list[str], start: int, end: int, ctx: dict[str, Any]) -> None:
    """Update the FX provenance from the comment lines in ``lines[start:end]`` (0-based).

    A blank line with no provenance comment ends the previous FX node's group (``NetOutput``).
    """
    chunk = lines[start:end]
    if any(not t.strip() for t in chunk) and not any(_FILE.match(t) or _FX_CODE.match(t) for t in chunk):
        ctx.clear()
    for text in chunk:
        m = _FILE.match(text)
        if m:
            ctx["source"] = f"{m.group('path')}:{m.group('line')}"
            ctx["fx_node"] = None
        m = _FX_CODE.match(text)
        if m:
            ctx.update(fx_node=m.group("name"), fx_target=m.group("target").removeprefix("torch.ops."),
                       fx_code=m.group("code"))


def parse_py_dump(text: str, origin: str = "<py>", default_name: str = "graph") -> Graph:
    try:
        tree = ast.parse(text, filename=origin)
    except SyntaxError as e:
        raise GraphReadError(f"not valid Python: {e.msg}", file=origin, line=e.lineno or 1, column=e.offset,
                             hint=HINT) from e
    except (ValueError, RecursionError, MemoryError) as e:  # null bytes, absurd nesting
        raise GraphReadError(f"not valid Python: {e}", file=origin, line=1, hint=HINT) from e
    lines = text.split("\n")
    builder = _Builder(origin, lines)
    ctx: dict[str, Any] = {}
    previous_end = 0
    for stmt in tree.body:
        _context(lines, previous_end, stmt.lineno - 1, ctx)
        previous_end = getattr(stmt, "end_lineno", stmt.lineno) or stmt.lineno
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr)) else None
        if not (isinstance(value, ast.Call) and _ge_op(value) is not None):
            continue
        target = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target = stmt.targets[0].id
        try:
            builder.call(value, target, ctx)
        except RecursionError as e:
            raise builder.error("nesting too deep", stmt) from e
    if not builder.nodes:
        raise GraphReadError("no ge.<Op>(...) calls found", file=origin, line=1, hint=HINT)
    return Graph(name=default_name, dialect="ge", nodes=builder.nodes)


def read_py_dump(path: Path | str) -> Graph:
    path = Path(path)
    return parse_py_dump(path.read_text(encoding="utf-8"), str(path), default_name=path.stem)

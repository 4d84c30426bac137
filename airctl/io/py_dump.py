"""TorchAir's ``.py`` graph dumps: a replayable script of ``ge.<Op>(...)`` calls (reference/torchair.md §5.1).

Every statement form TorchAir's ``GeGraph.add_python_code`` writes is read: ``x_0 = ge.Op(...,
node_name="x")``; an op with several outputs, ``[Op_0, Op_1] = ge.Op(...)`` (no ``node_name``: the
op's name is the variables' ``<op>_<k>`` prefix) and nested one deep, ``y, [a, b] = ...``; ``_ =
ge.NetOutput(...)``; inline ``ge.Const(...)``; and a literal where an input goes (``ge.Transpose(x,
[1, 0])``), which TorchAir turns into a ``Const`` op of its own (one per element for a dynamic input
such as ``ge.Pack([4, -1], N=2)``). The op count then equals the ``.txt`` dump's, less the ``Const``
ops no op consumes (a converter made them and used another; the script never mentions them).
Const names follow GE's scheme (``Const``, ``Const_1``, ...) in the order the script creates them,
which may differ from GE's own.

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
from typing import Any

from airctl.errors import GraphReadError
from airctl.graph.model import Graph, Node

HINT = "expected a TorchAir .py graph dump (config.debug.graph_dump.type = 'py')"
# ``name: type = target(...)``; a node with several outputs has no type (``native_layer_norm = ...``)
_FX_CODE = re.compile(r"^\s*## FX Code: (?P<code>(?P<name>[\w.]+)\s*(?::[^=]*)?=\s*(?P<target>[\w.]+)\(.*)$")
_FILE = re.compile(r'^\s*# File "(?P<path>[^"]+)", line (?P<line>\d+)')
_GE_CALL = re.compile(r"^\s*[\w\[(][\w\s,\[\]()]*=\s*ge\.[\w.]+\(|^_ = ge\.NetOutput\(", re.MULTILINE)


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
        self.vars: dict[str, str] = {}  # python variable -> the GE output it holds, "<op>:<index>"
        self.counts: dict[str, int] = {}  # GE's own naming: Const, Const_1, Const_2, ...

    def error(self, message: str, node: ast.AST, hint: str = HINT) -> GraphReadError:
        return GraphReadError(message, file=self.origin, line=getattr(node, "lineno", None),
                              column=getattr(node, "col_offset", None), hint=hint)

    def undefined(self, name: str, node: ast.AST) -> GraphReadError:
        return self.error(f"name {name!r} used before it is defined", node,
                          hint="no earlier statement of the dump assigns it: the dump is cut short, or a statement "
                               "form airctl does not read yet (please report it, with the file)")

    def unique(self, base: str) -> str:
        """The next free name GE's way: ``base``, then ``base_1``, ``base_2``, ..."""
        count = self.counts.get(base, 0)
        name = base if count == 0 else f"{base}_{count}"
        while name in self.names:
            count += 1
            name = f"{base}_{count}"
        self.counts[base] = count + 1
        return name

    def literal_const(self, value: ast.expr) -> str:
        """A literal given where an input goes (``ge.Transpose(x, [1, 0])``): TorchAir converts it to a
        ``Const`` op of its own (``_auto_type_promotion_for_const``), which the txt dump lists."""
        name = self.unique("Const")
        self.names.add(name)
        self.nodes.append(Node(name=name, op="Const", attrs={"value": _literal(value)}, kind="op",
                               meta={"py_line": value.lineno, "from_literal": True}))
        return f"{name}:0"

    def refs(self, value: ast.expr, ctx: dict[str, Any]) -> list[str] | None:
        """Input references in a call argument, or None when the argument is a plain attribute."""
        if isinstance(value, ast.Name):
            if value.id not in self.vars:
                raise self.undefined(value.id, value)
            return [self.vars[value.id]]
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) \
                and isinstance(value.slice, ast.Constant) and isinstance(value.slice.value, int):
            if value.value.id not in self.vars:
                raise self.undefined(value.value.id, value)
            return [f"{self.vars[value.value.id].rsplit(':', 1)[0]}:{value.slice.value}"]
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

    def call(self, call: ast.Call, targets: list[str | None] | None, ctx: dict[str, Any]) -> str:
        """One ``ge.<Op>(...)`` call; ``targets``: the variables its outputs are assigned to, in output
        order (``None`` for an inline call, ``[None]`` for ``_ = ...``)."""
        op = _ge_op(call) or ""
        inputs: list[str] = []
        control: list[str] = []
        attrs: dict[str, Any] = {}
        name: str | None = None
        const_args: list[Any] = []
        # a literal where an input goes becomes a Const op after the call's inline ge.Const(...) calls; a
        # list literal is one Const, or one per element for a dynamic input (Pack, ConcatV2, AddN: `N=` counts it)
        n_inputs = next((kw.value.value for kw in call.keywords
                         if kw.arg == "N" and isinstance(kw.value, ast.Constant)), None)
        literals: list[tuple[int, ast.expr]] = []  # (input position, literal), in argument order
        for arg in call.args:
            refs = self.refs(arg, ctx)
            if refs is not None:
                inputs += refs
            elif op == "Const":
                const_args.append(_literal(arg))
            else:
                dynamic = isinstance(arg, (ast.List, ast.Tuple)) and arg.elts and n_inputs == len(arg.elts)
                for value in (arg.elts if dynamic else [arg]):
                    literals.append((len(inputs), value))
                    inputs.append("")
        for position, value in literals:
            inputs[position] = self.literal_const(value)
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
        if name is None:  # a multi-output op (TorchAir names no node) or an inline ge.Const(...)
            name = self.unique(_name_from_targets(targets) or op or "op")
        if name in self.names:
            raise self.error(f"duplicate node_name {name!r}", call)
        self.names.add(name)
        meta: dict[str, Any] = {"py_line": call.lineno}
        if ctx.get("fx_node"):
            meta.update({"fx_node": ctx["fx_node"], "fx_target": ctx["fx_target"], "fx_code": ctx["fx_code"]})
        self.nodes.append(Node(name=name, op=op, inputs=inputs, control_inputs=control, attrs=attrs,
                               source=ctx.get("source"), kind="op", meta=meta))
        for index, var in enumerate(targets or []):
            if var is not None and var != "_":
                self.vars[var] = f"{name}:{index}"
        return name


def _flat_targets(target: ast.expr) -> list[str | None]:
    """The variables of an assignment target in output order: ``x``, ``[a, b, c]`` (an op with several
    outputs) and ``y, [a, b]`` (outputs nested one deep), as TorchAir's ``add_python_code`` writes them."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.List, ast.Tuple)):
        found: list[str | None] = []
        for elt in target.elts:
            found += _flat_targets(elt)
        return found
    return [None]  # an attribute or subscript target: the output is not referenced by name


_OUTPUT_VAR = re.compile(r"^(?P<op>.+)_(?P<index>\d+)$")


def _name_from_targets(targets: list[str | None] | None) -> str | None:
    """TorchAir names an output variable ``<GE op>_<output>`` (``LayerNormV4_1_0`` is output 0 of
    ``LayerNormV4_1``): the op's name when the call has no ``node_name``."""
    first = next((t for t in targets or [] if t and t != "_"), None)
    m = _OUTPUT_VAR.match(first or "")
    return m.group("op") if m else None


def _ge_op(call: ast.Call) -> str | None:
    """``Add`` for ``ge.Add(...)``, and for an attribute call under ``ge`` (``ge.custom.Add(...)``)."""
    f = call.func
    if not isinstance(f, ast.Attribute):
        return None
    root: ast.expr = f.value
    while isinstance(root, ast.Attribute):
        root = root.value
    return f.attr if isinstance(root, ast.Name) and root.id == "ge" else None


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
        targets: list[str | None] = [None]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            targets = _flat_targets(stmt.targets[0])
        try:
            builder.call(value, targets, ctx)
        except RecursionError as e:
            raise builder.error("nesting too deep", stmt) from e
    if not builder.nodes:
        raise GraphReadError("no ge.<Op>(...) calls found", file=origin, line=1, hint=HINT)
    return Graph(name=default_name, dialect="ge", nodes=builder.nodes)


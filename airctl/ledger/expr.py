"""``--bad-if EXPR``: a Python expression over a run's ``index.json``, evaluated without ``eval``.

``airctl bisect --bad-if`` lets the user say what a failing run looks like in terms of its index.
The expression is parsed with :mod:`ast` and walked by a small interpreter that knows only data:
literals, names bound to the index, ``a.b`` and ``a["b"]`` on dicts and lists, arithmetic,
comparisons, ``and``/``or``/``not``, ``x if c else y``, comprehensions, a few built-in functions
(``len any all sum min max sorted abs round bool int float str list set``) and a few string and
dict methods. No imports, no other calls, no attributes of Python objects: an expression read
from a shared script cannot reach the machine.

Names: every top-level key of ``index.json`` (``status``, ``execution``, ``findings``, ``graphs``,
``error``, ``timings``, ...), ``index`` (all of it), ``races`` (``execution.races``, or ``[]``),
``stages`` (every stage of every graph, each with its ``graph`` id added) and ``error_findings``
(the findings of severity ``error``).

>>> evaluate("len(races) > 0 or status == 'mismatch'", {"status": "mismatch", "graphs": []})
True
>>> evaluate("any(s.name.startswith('yaml:') and s.changed for s in stages)",
...          {"graphs": [{"id": "1-inference", "stages": [{"name": "yaml:p", "changed": True}]}]})
True
"""

from __future__ import annotations

import ast
import operator
from typing import Any

from airctl.errors import AirctlError

FUNCTIONS = {f.__name__: f for f in (len, any, all, sum, min, max, sorted, abs, round, bool, int, float, str, list,
                                     set)}
METHODS = {str: {"startswith", "endswith", "lower", "upper", "split", "strip", "count", "replace"},
           dict: {"get", "keys", "values", "items"}, list: {"count", "index"}}
BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
           ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
           ast.Is: operator.is_, ast.IsNot: operator.is_not}


class ExprError(AirctlError):
    """A --bad-if expression that cannot be parsed or uses what the evaluator does not allow."""


def names_of(index: dict[str, Any]) -> dict[str, Any]:
    """The names an expression sees for one ``index.json``."""
    execution = index.get("execution") or {}
    stages = [{**s, "graph": g.get("id")} for g in index.get("graphs") or [] for s in g.get("stages") or []]
    return {**index, "index": index, "races": list(execution.get("races") or []), "stages": stages,
            "error_findings": [f for f in index.get("findings") or [] if f.get("severity") == "error"]}


def check(expr: str) -> ast.Expression:
    """Parse ``expr``; raises :class:`ExprError` for a syntax error."""
    try:
        return ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ExprError(f"--bad-if: syntax error: {e.msg}", column=e.offset,
                        hint="a Python expression over index.json, e.g. \"len(races) > 0\"") from None


def evaluate(expr: str, index: dict[str, Any]) -> Any:
    """The value of ``expr`` for ``index`` (raises :class:`ExprError` on anything not allowed)."""
    return _Eval(names_of(index)).visit(check(expr).body)


class _Eval:
    def __init__(self, names: dict[str, Any]) -> None:
        self.scopes = [names]

    def visit(self, node: ast.AST) -> Any:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise ExprError(f"--bad-if: {type(node).__name__} is not allowed",
                            hint="use names, literals, comparisons, and/or/not, comprehensions and "
                                 + ", ".join(FUNCTIONS))
        return method(node)

    def _Constant(self, node: ast.Constant) -> Any:  # noqa: N802 - ast node names
        return node.value

    def _Name(self, node: ast.Name) -> Any:  # noqa: N802
        for scope in reversed(self.scopes):
            if node.id in scope:
                return scope[node.id]
        if node.id in FUNCTIONS or node.id in ("True", "False", "None"):
            return FUNCTIONS.get(node.id)
        raise ExprError(f"--bad-if: unknown name `{node.id}`",
                        hint="names: the keys of index.json, index, races, stages, error_findings")

    def _Attribute(self, node: ast.Attribute) -> Any:  # noqa: N802
        value = self.visit(node.value)
        if isinstance(value, dict):
            return value.get(node.attr)
        raise ExprError(f"--bad-if: `.{node.attr}` on a {type(value).__name__} (only on mappings)")

    def _Subscript(self, node: ast.Subscript) -> Any:  # noqa: N802
        value, key = self.visit(node.value), self.visit(node.slice)
        try:
            return value[key]
        except (KeyError, IndexError, TypeError):
            return None

    def _Slice(self, node: ast.Slice) -> slice:  # noqa: N802
        return slice(*(self.visit(p) if p is not None else None for p in (node.lower, node.upper, node.step)))

    def _List(self, node: ast.List) -> list[Any]:  # noqa: N802
        return [self.visit(e) for e in node.elts]

    def _Tuple(self, node: ast.Tuple) -> tuple[Any, ...]:  # noqa: N802
        return tuple(self.visit(e) for e in node.elts)

    def _Set(self, node: ast.Set) -> set[Any]:  # noqa: N802
        return {self.visit(e) for e in node.elts}

    def _Dict(self, node: ast.Dict) -> dict[Any, Any]:  # noqa: N802
        pairs = zip(node.keys, node.values, strict=False)
        return {self.visit(k) if k is not None else None: self.visit(v) for k, v in pairs}

    def _BoolOp(self, node: ast.BoolOp) -> Any:  # noqa: N802
        value: Any = None
        for part in node.values:
            value = self.visit(part)
            if isinstance(node.op, ast.And) and not value or isinstance(node.op, ast.Or) and value:
                return value
        return value

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:  # noqa: N802
        value = self.visit(node.operand)
        ops = {ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos}
        return ops[type(node.op)](value) if type(node.op) in ops else self._refuse(node.op)

    def _BinOp(self, node: ast.BinOp) -> Any:  # noqa: N802
        fn = BINARY.get(type(node.op))
        return fn(self.visit(node.left), self.visit(node.right)) if fn else self._refuse(node.op)

    def _Compare(self, node: ast.Compare) -> bool:  # noqa: N802
        left = self.visit(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=False):
            right = self.visit(right_node)
            try:
                if not COMPARE[type(op)](left, right):
                    return False
            except TypeError:
                return False
            left = right
        return True

    def _IfExp(self, node: ast.IfExp) -> Any:  # noqa: N802
        return self.visit(node.body) if self.visit(node.test) else self.visit(node.orelse)

    def _Call(self, node: ast.Call) -> Any:  # noqa: N802
        if node.keywords:
            raise ExprError("--bad-if: keyword arguments are not allowed")
        args = [self.visit(a) for a in node.args]
        if isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS:
            return FUNCTIONS[node.func.id](*args)
        if isinstance(node.func, ast.Attribute):
            owner = self.visit(node.func.value)
            allowed = next((m for t, m in METHODS.items() if isinstance(owner, t)), set())
            if node.func.attr in allowed:
                return getattr(owner, node.func.attr)(*args)
        raise ExprError(f"--bad-if: calling `{ast.unparse(node.func)}` is not allowed",
                        hint="functions: " + ", ".join(FUNCTIONS) + "; str/dict/list methods: "
                             + ", ".join(sorted(set().union(*METHODS.values()))))

    def _comprehension(self, node: Any, make: Any) -> Any:
        results: list[Any] = []

        def loop(i: int) -> None:
            if i == len(node.generators):
                results.append(self.visit(node.elt))
                return
            gen = node.generators[i]
            for item in self.visit(gen.iter):
                self.scopes.append(self._bind(gen.target, item))
                try:
                    if all(self.visit(cond) for cond in gen.ifs):
                        loop(i + 1)
                finally:
                    self.scopes.pop()

        loop(0)
        return make(results)

    def _bind(self, target: ast.AST, item: Any) -> dict[str, Any]:
        if isinstance(target, ast.Name):
            return {target.id: item}
        if isinstance(target, ast.Tuple):
            out: dict[str, Any] = {}
            for t, v in zip(target.elts, item, strict=False):
                out.update(self._bind(t, v))
            return out
        raise ExprError("--bad-if: loop targets must be names")

    def _GeneratorExp(self, node: ast.GeneratorExp) -> list[Any]:  # noqa: N802 - evaluated eagerly
        return self._comprehension(node, list)

    def _ListComp(self, node: ast.ListComp) -> list[Any]:  # noqa: N802
        return self._comprehension(node, list)

    def _SetComp(self, node: ast.SetComp) -> set[Any]:  # noqa: N802
        return self._comprehension(node, set)

    def _refuse(self, op: ast.AST) -> Any:
        raise ExprError(f"--bad-if: the operator {type(op).__name__} is not allowed")

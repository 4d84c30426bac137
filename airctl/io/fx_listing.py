"""Read the ``graph():`` listing torch prints for an FX graph (``str(gm.graph)``), as TorchAir logs it.

TorchAir's DEBUG log shows each compiled graph this way ("after fx graph optimization, graph is
graph():", reference/torchair.md §7), and it is often all a user copies off an NPU machine. The
format is ``torch.fx.Node.format_node`` (torch 2.13)::

    graph():
        %arg0_1 : [num_users=2] = placeholder[target=arg0_1]
        %scope_enter_default : [num_users=0] = call_function[target=torch.ops.air.scope_enter.default](args = (
            [_user_stream_label], [stream_1]), kwargs = {})                    (one line in the listing)
        %mm : [num_users=2] = call_function[target=torch.ops.aten.mm.default](args = (%arg0_1, %arg0_1), kwargs = {})
        %l_x_ : torch.Tensor [num_users=2] = placeholder[target=L_x_]           (Dynamo graphs: a type)
        return (add, sub)

Nodes become the same :class:`~airctl.graph.model.Node` ``read_fx`` makes from a live graph
(``op`` ``aten.mm.default``, ``inputs`` the distinct ``%`` references in order, ``attrs`` ``args``
and ``kwargs`` as JSON with ``"%name"`` for nodes, ``stream`` from the scopes).

**What the text cannot say** (torch prints arguments with ``str``, never ``repr``):

- strings are unquoted: ``'1'``, ``'True'``, ``'None'`` read back as ``1``, ``True``, ``None``; a
  string holding ``, `` or a bracket splits; ``'%x'`` reads as a reference to node ``x``. The
  arguments of ``air.scope_enter`` (schema ``str[] keys, str[] values``) are read as strings,
  so stream labels survive; other ops' string arguments may not.
- a device prints as ``cpu``/``npu:0`` (``read_fx`` writes ``device(type='cpu')``);
- there are no shapes, dtypes, source lines or module paths (``source`` and ``module`` stay empty;
  ``meta`` holds only ``line``, where the node is listed, and the graph's ``attrs`` the file as
  ``origin``, so findings point into the file), and ``num_users`` and Dynamo's type annotations
  are dropped.

Nothing is evaluated: the text is split by a small bracket-aware scanner, with bounded nesting
and line length; a line that is not a node raises :class:`~airctl.errors.GraphReadError` with
its file and line.

>>> g = parse_fx_listing("graph():\\n    %x : [num_users=1] = placeholder[target=x]\\n    return (x,)")
>>> [(n.name, n.op, n.inputs) for n in g.nodes]
[('x', 'placeholder', []), ('output', 'output', ['x'])]
"""

from __future__ import annotations

import math
import re
from typing import Any

from airctl.errors import GraphReadError
from airctl.graph.model import Graph, Node
from airctl.io.fx_reader import assign_streams

HINT = "expected a torch.fx `graph():` listing (print(gm.graph)), one `%name : [num_users=N] = ...` line per node"
MAX_LINE = 1 << 20  # characters in one node line
MAX_DEPTH = 64  # nesting of lists/tuples/dicts in one argument
# schema str[] keys, str[] values: atoms are strings (TorchAir's op and npugraph_ex's copy)
STRING_ARG_OPS = ("air.scope_enter", "npugraph_ex.scope_enter")

_HEADER = re.compile(r"^graph\((?P<params>.*)\)(?: -> .*)?:\s*$")
_NODE = re.compile(
    r"^%(?P<name>[^\s:]+) : (?:(?P<type>.*?) )?\[num_users=(?P<users>\d+)\] = "
    r"(?P<op>placeholder|get_attr|call_function|call_method|call_module)\[target=(?P<target>[^\]]*)\](?P<rest>.*)$")
_REF = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)")
_NUMBER = re.compile(r"^-?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)$")
_SPECIAL = {"None": None, "True": True, "False": False, "inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def normalise_target(printed: str) -> str:
    """A target as torch prints it, as ``read_fx`` names it: ``torch.ops.aten.mm.default`` ->
    ``aten.mm.default``, ``operator.getitem`` -> ``getitem``, ``torch.mm`` stays."""
    if printed.startswith("torch.ops."):
        return printed[len("torch.ops."):]
    for prefix in ("operator.", "_operator.", "builtins."):
        if printed.startswith(prefix):
            return printed[len(prefix):]
    return printed


class _Scanner:
    """Splits one argument text into values: ``%x`` refs, numbers, None/True/False, strings."""

    def __init__(self, text: str, origin: str, line: int, as_text: bool = False) -> None:
        self.text, self.i, self.origin, self.line, self.as_text = text, 0, origin, line, as_text

    def fail(self, message: str) -> GraphReadError:
        return GraphReadError(f"{message} at column {self.i + 1}", file=self.origin, line=self.line,
                              column=self.i + 1, hint=HINT)

    def expect(self, word: str) -> None:
        if not self.text.startswith(word, self.i):
            raise self.fail(f"expected {word!r}")
        self.i += len(word)

    def value(self, depth: int = 0, closers: str = "") -> Any:
        if depth > MAX_DEPTH:
            raise self.fail("arguments nested too deeply")
        ch = self.text[self.i:self.i + 1]
        if ch in ("(", "["):
            return self.sequence({"(": ")", "[": "]"}[ch], depth)
        if ch == "{":
            return self.mapping(depth)
        return self.atom(closers)

    def sequence(self, close: str, depth: int) -> list[Any]:
        self.i += 1
        items: list[Any] = []
        while True:
            if self.text.startswith(close, self.i):
                self.i += 1
                return items
            items.append(self.value(depth + 1, close))
            if self.text.startswith(", ", self.i):
                self.i += 2
            elif self.text.startswith(",", self.i):  # the (a,) of a 1-tuple
                self.i += 1
            elif not self.text.startswith(close, self.i):
                raise self.fail(f"expected ',' or {close!r}")

    def mapping(self, depth: int) -> dict[str, Any]:
        self.i += 1
        out: dict[str, Any] = {}
        while not self.text.startswith("}", self.i):
            colon = self.text.find(": ", self.i)
            if colon < 0:
                raise self.fail("expected 'key: value'")
            key = self.text[self.i:colon]
            self.i = colon + 2
            out[key] = self.value(depth + 1, "}")
            if self.text.startswith(", ", self.i):
                self.i += 2
            elif not self.text.startswith("}", self.i):
                raise self.fail("expected ',' or '}'")
        self.i += 1
        return out

    def atom(self, closers: str) -> Any:
        """Text up to ``, `` or an unmatched closing bracket; brackets inside (``slice(None, 1)``) nest."""
        start, depth = self.i, 0
        while self.i < len(self.text):
            ch = self.text[self.i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif ch == "," and depth == 0 and (closers or self.text.startswith(", ", self.i)):
                break
            self.i += 1
        raw = self.text[start:self.i]
        if not raw:
            raise self.fail("expected a value")
        return read_atom(raw, self.as_text)


def read_atom(raw: str, as_text: bool = False) -> Any:
    """One printed value: ``%x`` -> ``"%x"``; numbers, None, True, False, inf, nan; else the string."""
    if raw.startswith("%") and _REF.fullmatch(raw):
        return raw
    if as_text:
        return raw
    if raw in _SPECIAL:
        return _SPECIAL[raw]
    if _NUMBER.match(raw):
        return float(raw) if any(c in raw for c in ".eE") else int(raw)
    return raw


def _distinct_refs(text: str) -> list[str]:
    return list(dict.fromkeys(_REF.findall(text)))


def _call_args(rest: str, op: str, origin: str, line: int) -> tuple[Any, Any]:
    """``(args = (...), kwargs = {...})`` -> (args list, kwargs dict)."""
    scanner = _Scanner(rest, origin, line, as_text=op.startswith(STRING_ARG_OPS))
    scanner.expect("(args = ")
    args = scanner.value()
    scanner.as_text = False  # kwargs (need_execute: True) keep their types
    scanner.expect(", kwargs = ")
    kwargs = scanner.value()
    scanner.expect(")")
    if scanner.i != len(rest.rstrip()):
        raise scanner.fail("unexpected text after the arguments")
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise scanner.fail("args must be a tuple and kwargs a dict")
    return args, kwargs


def _output(text: str, known: set[str], origin: str, line: int) -> Node:
    """``return (add, sub)``: Python's repr of the output value; bare names are nodes."""
    scanner = _Scanner(text, origin, line)
    value = scanner.value()

    def nodes_of(v: Any) -> Any:
        if isinstance(v, list):
            return [nodes_of(x) for x in v]
        if isinstance(v, dict):
            return {k.strip("'\""): nodes_of(x) for k, x in v.items()}
        if isinstance(v, str) and v in known:
            return "%" + v
        if isinstance(v, str) and len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
            return v[1:-1]
        return v

    value = nodes_of(value)
    refs: list[str] = []

    def collect(v: Any) -> None:
        if isinstance(v, list):
            for x in v:
                collect(x)
        elif isinstance(v, dict):
            for x in v.values():
                collect(x)
        elif isinstance(v, str) and v.startswith("%") and v[1:] in known:
            refs.append(v[1:])

    collect(value)
    return Node("output", "output", inputs=list(dict.fromkeys(refs)), attrs={"args": [value]}, kind="output")


def parse_fx_listing(text: str, origin: str = "<listing>", name: str = "graph", first_line: int = 1) -> Graph:
    """A ``graph():`` listing as a graph (``first_line``: where the text starts in ``origin``)."""
    nodes: list[Node] = []
    known: set[str] = set()
    seen_output = False
    for offset, raw in enumerate(text.split("\n")):
        line_no = first_line + offset
        line = raw.strip()
        if not line:
            continue
        if len(line) > MAX_LINE:
            raise GraphReadError(f"line longer than {MAX_LINE} characters", file=origin, line=line_no, hint=HINT)
        header = _HEADER.match(line)
        if header:
            if nodes:
                raise GraphReadError("a second `graph():` header inside one listing", file=origin, line=line_no,
                                     hint="give one graph per file, or the whole TorchAir log (`airctl import`)")
            for param in filter(None, (p.strip() for p in header["params"].split(","))):
                pname = param.split(":")[0].strip()
                nodes.append(Node(pname, "placeholder", kind="placeholder"))
                known.add(pname)
            continue
        if seen_output:
            raise GraphReadError("text after the `return` line", file=origin, line=line_no, hint=HINT)
        if line.startswith("return"):
            nodes.append(_output(line[len("return"):].strip() or "None", known, origin, line_no))
            nodes[-1].meta["line"] = line_no
            seen_output = True
            continue
        m = _NODE.match(line)
        if m is None:
            raise GraphReadError(f"not a node line: {line[:80]!r}", file=origin, line=line_no, hint=HINT)
        node_name, kind, target = m["name"], m["op"], m["target"]
        if node_name in known:
            raise GraphReadError(f"node %{node_name} is listed twice", file=origin, line=line_no, node=node_name)
        node = _node(node_name, kind, target, m["rest"], origin, line_no)
        missing = [r for r in node.inputs if r not in known]
        if missing:
            raise GraphReadError(f"node %{node_name} uses %{missing[0]} before it is defined", file=origin,
                                 line=line_no, node=node_name, hint="the listing looks truncated or reordered")
        node.meta["line"] = line_no  # where it is listed: findings on a listing point here
        nodes.append(node)
        known.add(node_name)
    if not nodes:
        raise GraphReadError("no nodes in the listing", file=origin, line=first_line, hint=HINT)
    assign_streams(nodes)
    return Graph(name=name, dialect="fx", nodes=nodes, attrs={"origin": origin})


def _node(name: str, kind: str, target: str, rest: str, origin: str, line: int) -> Node:
    if kind == "placeholder":
        return Node(name, "placeholder", kind="placeholder")
    if kind == "get_attr":
        return Node(name, target, kind="get_attr", attrs={"target": target})
    op = normalise_target(target) if kind == "call_function" else target
    args, kwargs = _call_args(rest, op, origin, line)
    attrs: dict[str, Any] = {"args": args}
    if kwargs:
        attrs["kwargs"] = kwargs
    return Node(name, op, inputs=_distinct_refs(rest), attrs=attrs, kind=kind)


def is_fx_listing(text: str) -> bool:
    """Does ``text`` (a file's start) look like a ``graph():`` listing?"""
    for line in text.lstrip().split("\n", 3)[:3]:
        line = line.strip()
        if _HEADER.match(line) or _NODE.match(line[:MAX_LINE]):
            return True
    return False

"""Unified text diffs of FX graphs that renamed nodes cannot fool.

FX renames freely (``mm`` becomes ``mm_1`` after a retrace, inserted nodes take suffixes), so a
plain diff of two graphs' code shows noise. :func:`canonical_lines` writes one line per node with
every name replaced by ``<op>#<k>`` — the op's short name and its occurrence number among nodes of
the same op in graph order (placeholders ``input#k``) — and arguments written with those names.
Inserting a ``scope_enter`` then changes exactly one line, never the numbering of ``mm``.

>>> from airctl.graph.model import Graph, Node
>>> a = Graph("a", "fx", [Node("x", "placeholder", kind="placeholder"),
...                       Node("mm_7", "aten.mm.default", ["x", "x"], attrs={"args": ["%x", "%x"]})])
>>> canonical_lines(a)
['input#0 = placeholder', 'mm#0 = aten.mm.default(input#0, input#0)']
"""

from __future__ import annotations

import difflib
from typing import Any

from airctl.graph.model import Graph


def _short(op: str, kind: str) -> str:
    if kind == "placeholder":
        return "input"
    if kind == "output":
        return "output"
    parts = op.split(".")
    if len(parts) >= 3:  # aten.mm.default -> mm
        return parts[1]
    return parts[-1] if parts else op


def canonical_names(graph: Graph) -> dict[str, str]:
    counts: dict[str, int] = {}
    names: dict[str, str] = {}
    for node in graph.nodes:
        short = _short(node.op, node.kind)
        k = counts.get(short, 0)
        counts[short] = k + 1
        names[node.name] = f"{short}#{k}"
    return names


def _render(value: Any, names: dict[str, str]) -> str:
    if isinstance(value, str) and value.startswith("%") and value[1:] in names:
        return names[value[1:]]
    if isinstance(value, list):
        return "[" + ", ".join(_render(v, names) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_render(v, names)}" for k, v in value.items()) + "}"
    return repr(value)


def canonical_lines(graph: Graph) -> list[str]:
    names = canonical_names(graph)
    lines = []
    for node in graph.nodes:
        if node.kind == "placeholder":
            lines.append(f"{names[node.name]} = placeholder")
            continue
        args = node.attrs.get("args")
        if args is None:
            args = ["%" + i for i in node.inputs]
        rendered = [_render(a, names) for a in (args if isinstance(args, list) else [args])]
        kwargs = node.attrs.get("kwargs") or {}
        rendered += [f"{k}={_render(v, names)}" for k, v in kwargs.items()]
        if node.kind == "output":
            lines.append(f"return {', '.join(rendered)}")
        else:
            lines.append(f"{names[node.name]} = {node.op}({', '.join(rendered)})")
    return lines


def unified(before: Graph, after: Graph, before_label: str, after_label: str, context: int = 2) -> str:
    """The unified diff of two graphs' canonical lines ('' when they are the same)."""
    diff = difflib.unified_diff(canonical_lines(before), canonical_lines(after), fromfile=before_label,
                                tofile=after_label, lineterm="", n=context)
    return "\n".join(diff)

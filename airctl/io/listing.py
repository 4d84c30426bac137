"""A readable one-line-per-node listing of any graph (``airctl dump --type fx``).

FX-style assignments, whatever the dialect, so FX and GE graphs read alike::

    mm = aten.mm.default(arg0_1, arg0_1)  # stream=stream_1
    Sub = Sub(arg0_1:0, MatMul:0, ^Abs)
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

from airctl.escape import controls
from airctl.graph.model import GE_NAME_ATTRS, Graph
from airctl.io.gc_pause import without_gc
from airctl.io.paths import is_airctl_file

_NON_FINITE = {"Infinity": "inf", "-Infinity": "-inf", "NaN": "nan"}  # as the JSON snapshot spells them


def _arg(value: Any, names: set[str]) -> str:
    """One FX argument as the snapshot keeps it (a node as ``%name``), written as FX prints it; a value
    the snapshot keeps as text (a dtype, a slice) is quoted, as it is a string there."""
    if isinstance(value, str):
        if value.startswith("%") and value[1:] in names:
            return value[1:]
        return _NON_FINITE.get(value) or repr(value)
    if isinstance(value, list):
        return f"[{', '.join(_arg(v, names) for v in value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_arg(v, names)}" for k, v in value.items()) + "}"
    return repr(value)


def _args(graph: Graph, node: Any, names: set[str]) -> list[str]:
    """A node's arguments: an FX node's as its call has them (repeated inputs, numbers, lists,
    keywords), else its inputs (a GE op's, each once per use; an FX node whose snapshot holds no
    call of that shape)."""
    args, kwargs = node.attrs.get("args"), node.attrs.get("kwargs") or {}
    if graph.dialect == "fx" and isinstance(args, list) and isinstance(kwargs, dict):
        keys = {k: k if str(k).isidentifier() else repr(str(k)) for k in kwargs}  # a key is untrusted text too
        return [_arg(a, names) for a in args] + [f"{keys[k]}={_arg(v, names)}" for k, v in kwargs.items()]
    return [ref if ref else "None" for ref in node.inputs]


def format_listing(graph: Graph, attrs: bool = False) -> str:
    lines = [f"# graph {graph.name} ({graph.dialect}, {len(graph)} nodes)"]
    names = {n.name for n in graph.nodes}
    for node in graph.nodes:
        args = _args(graph, node, names) + [f"^{c}" for c in node.control_inputs]
        notes = []
        if node.stream is not None:
            notes.append(f"stream={node.stream}")
        if node.source:
            notes.append(node.source)
        if attrs:
            shown = {k: v for k, v in node.attrs.items() if k not in GE_NAME_ATTRS and k not in ('args', 'kwargs')}
            if shown:
                notes.append(json.dumps(shown, sort_keys=True, default=str))
        comment = f"  # {'  '.join(notes)}" if notes else ""
        lines.append(f"{node.name} = {node.op}({', '.join(args)}){comment}")
    # a listing is for people and terminals: control characters from graph contents shown as \xNN
    return controls("\n".join(lines)) + "\n"


# one frame of a node's ``stack_trace``: its ``File "...", line N, in f`` line and the code line under it
_TRACE_FRAME = re.compile(r'^ *File "(?P<file>[^"]+)", line \d+, in .*\n(?: {4,}.*\n?)?', re.MULTILINE)


def users_trace(trace: str) -> str:
    """A node's ``stack_trace`` without airctl's own frames (sim's stand-ins, inlined into the user's code
    by Dynamo, would otherwise be the innermost frame ``print_readable`` names above the node).

    >>> users_trace('  File "/w/m.py", line 3, in f\\n    torch.ones(2)\\n')
    '  File "/w/m.py", line 3, in f\\n    torch.ones(2)\\n'
    """
    return _TRACE_FRAME.sub(lambda m: "" if is_airctl_file(m["file"]) else m.group(0), trace)


@contextlib.contextmanager
def _users_traces(gm: Any) -> Iterator[None]:
    """Each node's ``stack_trace`` as :func:`users_trace` makes it, for the length of the block."""
    saved = []
    for module in gm.modules():
        for node in getattr(getattr(module, "graph", None), "nodes", ()):
            trace = node.meta.get("stack_trace")
            if isinstance(trace, str) and "airctl" in trace:
                own = users_trace(trace)
                if own != trace:
                    saved.append((node, trace))
                    node.meta["stack_trace"] = own
    try:
        yield
    finally:
        for node, trace in saved:
            node.meta["stack_trace"] = trace


@without_gc  # FX's code generator over thousands of nodes (airctl/io/gc_pause.py)
def fx_code(gm: Any) -> str:
    """A GraphModule's readable code (``print_readable``), or its graph when it cannot codegen; the source
    line above each node is the user's (or the library's), never airctl's (:func:`users_trace`)."""
    try:
        with _users_traces(gm):
            return gm.print_readable(False)
    except Exception:  # a half-built graph from a failed pass may not codegen
        return str(gm.graph)


def ge_ops_text(graph: Graph) -> str:
    """One line per GE op: name, type, inputs, control inputs, stream (ledger ``.txt`` of GE stages)."""
    lines = []
    for n in graph.nodes:
        extra = f"  stream={n.stream}" if n.stream else ""
        ctrl = f"  ctrl=[{', '.join(n.control_inputs)}]" if n.control_inputs else ""
        lines.append(f"{n.name:<24} {n.op:<20} in=[{', '.join(n.inputs)}]{ctrl}{extra}")
    return "\n".join(lines) + "\n"

"""A readable one-line-per-node listing of any graph (``airctl dump --type fx``).

FX-style assignments, whatever the dialect, so FX and GE graphs read alike::

    mm = aten.mm.default(arg0_1, arg0_1)  # stream=stream_1
    Sub = Sub(arg0_1:0, MatMul:0, ^Abs)
"""

from __future__ import annotations

import json
import re
from typing import Any

from airctl.graph.model import Graph
from airctl.io.gc_pause import without_gc

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_HIDDEN_ATTRS = ("_input_name_key", "_input_name_value", "_output_name_key", "_output_name_value")


def format_listing(graph: Graph, attrs: bool = False) -> str:
    lines = [f"# graph {graph.name} ({graph.dialect}, {len(graph)} nodes)"]
    for node in graph.nodes:
        args = [ref if ref else "None" for ref in node.inputs] + [f"^{c}" for c in node.control_inputs]
        notes = []
        if node.stream is not None:
            notes.append(f"stream={node.stream}")
        if node.source:
            notes.append(node.source)
        if attrs:
            shown = {k: v for k, v in node.attrs.items() if k not in _HIDDEN_ATTRS}
            if shown:
                notes.append(json.dumps(shown, sort_keys=True, default=str))
        comment = f"  # {'  '.join(notes)}" if notes else ""
        lines.append(f"{node.name} = {node.op}({', '.join(args)}){comment}")
    # a listing is for people and terminals: control characters from graph contents shown as \xNN
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", "\n".join(lines)) + "\n"


@without_gc  # FX's code generator over thousands of nodes (airctl/io/gc_pause.py)
def fx_code(gm: Any) -> str:
    """A GraphModule's readable code (``print_readable``), or its graph when it cannot codegen."""
    try:
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

"""A readable one-line-per-node listing of any graph (``airctl dump --type fx``).

FX-style assignments, whatever the dialect, so FX and GE graphs read alike::

    mm = aten.mm.default(arg0_1, arg0_1)  # stream=stream_1
    Sub = Sub(arg0_1:0, MatMul:0, ^Abs)
"""

from __future__ import annotations

import json

from airctl.graph.model import Graph

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
    return "\n".join(lines) + "\n"

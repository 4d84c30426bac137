"""Colours and line styles shared by every renderer (dot, svg, the HTML viewer), so a stream or a
diff status looks the same wherever a graph is drawn.

Streams are coloured in order of first appearance; the default stream (``None``) is grey.
Edge kinds: data solid grey, control dashed blue, sync (record -> wait) dashed red and thicker,
order (program order of a scope/record/wait node, :mod:`airctl.render.order`) light grey dots.
Diff status: added green, removed red (dashed outline), changed orange. Collectives (HCCL's
``Hcom*`` ops in GE, ``_c10d_functional.*`` and TorchAir's ``npu_define.*`` in FX) get a purple
double outline and their kind in the tooltip, wherever they sit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from airctl.graph.model import Node

DEFAULT_STREAM_FILL = "#e9ecef"
STREAM_FILLS = ("#9ecae1", "#fdd49e", "#c7e9c0", "#dadaeb", "#fcbba1", "#fff3a0", "#c6dbef", "#d9f0d3",
                "#f2d7ee", "#ffe0b2")
EDGE_STYLE = {  # kind -> (colour, dash, width)
    "data": ("#8a8f98", "", 1.0),
    "control": ("#2f6fdb", "6,4", 1.4),
    "sync": ("#d62728", "4,3", 2.2),
    "order": ("#b4b9c0", "1,3", 1.2),
}
STATUS_STROKE = {"added": "#1a7f37", "removed": "#cf222e", "changed": "#e36209"}
NODE_STROKE = "#495057"
COLLECTIVE_STROKE = "#6f42c1"


def collective_note(op: str) -> str | None:
    """``collective: all_reduce`` for a collective op (tooltips), None for any other op."""
    from airctl.graph.roles import collective_kind

    kind = collective_kind(op)
    return None if kind is None else f"collective: {kind}"


def stream_fills(streams: list[str | None]) -> dict[str | None, str]:
    """Stream -> fill colour, in the given order (the default stream grey)."""
    out: dict[str | None, str] = {None: DEFAULT_STREAM_FILL}
    k = 0
    for s in streams:
        if s is not None and s not in out:
            out[s] = STREAM_FILLS[k % len(STREAM_FILLS)]
            k += 1
    return out


def stream_label(stream: str | None) -> str:
    return "default stream" if stream is None else stream


def node_tooltip(node: Node, *more: str) -> str:
    """A node's tooltip in every picture, a line each: name, op, stream, ``more`` (dot: the stream a
    scope_enter opens), its collective kind, module and source line."""
    parts = [node.name, f"op: {node.op}", f"stream: {stream_label(node.stream)}", *more]
    note = collective_note(node.op)
    if note:
        parts.append(note)
    if node.module:
        parts.append(f"module: {node.module}")
    if node.source:
        parts.append(f"source: {node.source}")
    return "\n".join(parts)

"""SVG of a graph from airctl's own layered layout (:mod:`airctl.render.layout`), for graphs too
big for ``dot`` (>= 2k nodes) or machines without Graphviz.

Every node is a box filled with its stream's colour, labelled with its op and name, with a
``<title>`` tooltip (name, op, stream, module, source). Edges of one kind are drawn as one
``<path>`` (a 50k-node graph stays a few element per node). Scope, record and wait nodes are placed
by their program order (:mod:`airctl.render.order`: light dotted order edges, a ``scope_enter`` or
wait pulled to just above the op it precedes), and each stream scope is drawn as a band behind its
nodes, in its stream's colour. Everything taken from the graph goes
through :func:`airctl.render.text.esc`, so node names such as ``<script>`` stay text.
"""

from __future__ import annotations

from pathlib import Path

from airctl.graph.model import Graph
from airctl.render.layout import layered_layout
from airctl.render.order import program_order, stream_scopes
from airctl.render.style import (
    COLLECTIVE_STROKE,
    EDGE_STYLE,
    NODE_STROKE,
    STATUS_STROKE,
    collective_note,
    node_tooltip,
    stream_fills,
    stream_label,
)
from airctl.render.text import clip, esc

W, H = 160.0, 36.0  # node box
MARGIN = 40.0


def indexed_edges(graph: Graph) -> list[tuple[int, int, str]]:
    """The graph's edges as (src index, dst index, kind)."""
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    return [(index[e.src], index[e.dst], e.kind) for e in graph.edges()]


def _legend(fills: dict[str | None, str], used: list[str | None], statuses: set[str], x0: float, y0: float
            ) -> list[str]:
    out = [f'<g class="legend" font-size="12" transform="translate({x0:.0f},{y0:.0f})">']
    y = 0.0
    for s in used:
        out.append(f'<rect x="0" y="{y:.0f}" width="14" height="14" fill="{fills[s]}" stroke="{NODE_STROKE}"/>'
                   f'<text x="20" y="{y + 11:.0f}">{esc(stream_label(s))}</text>')
        y += 18
    for kind, (colour, dash, width) in EDGE_STYLE.items():
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line x1="0" y1="{y + 7:.0f}" x2="14" y2="{y + 7:.0f}" stroke="{colour}" '
                   f'stroke-width="{width}"{dashes}/><text x="20" y="{y + 11:.0f}">{kind} edge</text>')
        y += 18
    for status in ("added", "removed", "changed"):
        if status in statuses:
            out.append(f'<rect x="0" y="{y:.0f}" width="14" height="14" fill="none" stroke-width="3" '
                       f'stroke="{STATUS_STROKE[status]}"/><text x="20" y="{y + 11:.0f}">{status}</text>')
            y += 18
    out.append("</g>")
    return out


def _bands(graph: Graph, streams: list[str | None], fills: dict[str | None, str], xs: list[float],
           ys: list[float]) -> list[str]:
    """One rectangle per stream scope around its nodes (their bounding box), label on top."""
    scopes, member = stream_scopes(graph, streams)
    if not scopes:
        return []
    inf = float("inf")
    box = [[inf, inf, -inf, -inf] for _ in scopes]
    for i, k in enumerate(member):
        if k >= 0:
            b = box[k]
            b[0], b[1] = min(b[0], xs[i]), min(b[1], ys[i])
            b[2], b[3] = max(b[2], xs[i]), max(b[3], ys[i])
    out = ['<g class="scopes" font-size="11">']
    for stream, (x0, y0, x1, y1) in zip(scopes, box, strict=True):
        x, y = x0 - W / 2 - 8, y0 - H / 2 - 20
        w, h = x1 - x0 + W + 16, y1 - y0 + H + 28
        out.append(f'<g class="scope"><rect x="{x:.0f}" y="{y:.0f}" width="{w:.0f}" height="{h:.0f}" rx="8" '
                   f'fill="{fills[stream]}" fill-opacity="0.25" stroke="{NODE_STROKE}" stroke-dasharray="5,3"/>'
                   f'<text x="{x + 6:.0f}" y="{y + 13:.0f}">stream: {esc(clip(stream))}</text></g>')
    out.append("</g>")
    return out


def write_svg(graph: Graph, out: Path, status: dict[str, str] | None = None) -> None:
    """Write ``graph`` as SVG to ``out``; ``status`` maps node names to added/removed/changed."""
    out.write_text(svg_text(graph, status), encoding="utf-8")


def svg_text(graph: Graph, status: dict[str, str] | None = None) -> str:
    status = status or {}
    nodes = graph.nodes
    edges = indexed_edges(graph)
    order = program_order(graph)
    edges += [(s, d, "order") for s, d in order.pairs()]
    streams = order.streams
    used = list(dict.fromkeys(streams))
    column = {s: k for k, s in enumerate(used)}
    lay = layered_layout(len(nodes), ((s, d) for s, d, _ in edges), dx=W + 24, dy=H + 44, pull=order.pull,
                         groups=[column[s] for s in streams] if len(used) > 1 else None)
    min_x, min_y, max_x, max_y = lay.bounds()
    legend_w = 190.0
    ox = MARGIN + legend_w + W / 2 - min_x
    oy = MARGIN + H / 2 - min_y
    width = max_x - min_x + W + 2 * MARGIN + legend_w
    height = max(max_y - min_y + H + 2 * MARGIN, 260.0)
    fills = stream_fills(used)
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="Helvetica,Arial,sans-serif">',
        f"<title>{esc(graph.name)}: {len(nodes)} nodes</title>",
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>',
    ]
    xs = [x + ox for x in lay.x]
    ys = [y + oy for y in lay.y]
    parts += _bands(graph, streams, fills, xs, ys)
    for kind, (colour, dash, width_) in EDGE_STYLE.items():
        segs = [f"M{xs[s]:.0f} {ys[s] + H / 2:.0f}L{xs[d]:.0f} {ys[d] - H / 2:.0f}"
                for s, d, k in edges if k == kind]
        if segs:
            dashes = f' stroke-dasharray="{dash}"' if dash else ""
            parts.append(f'<path class="edges-{kind}" fill="none" stroke="{colour}" stroke-width="{width_}"'
                         f'{dashes} d="{"".join(segs)}"/>')
    parts.append('<g class="nodes" font-size="11" text-anchor="middle">')
    for i, node in enumerate(nodes):
        x, y = xs[i] - W / 2, ys[i] - H / 2
        st = status.get(node.name)
        collective = collective_note(node.op) is not None
        stroke = STATUS_STROKE.get(st or "", COLLECTIVE_STROKE if collective else NODE_STROKE)
        extra = ' stroke-width="3"' if st or collective else ""
        if st == "removed":
            extra += ' stroke-dasharray="5,3" opacity="0.75"'
        parts.append(
            f'<g><title>{esc(node_tooltip(node))}</title>'
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{W:.0f}" height="{H:.0f}" rx="5" fill="{fills[streams[i]]}" '
            f'stroke="{stroke}"{extra}/>'
            f'<text x="{xs[i]:.0f}" y="{y + 15:.0f}" font-weight="bold">{esc(clip(node.op))}</text>'
            f'<text x="{xs[i]:.0f}" y="{y + 29:.0f}">{esc(clip(node.name))}</text></g>')
    parts.append("</g>")
    parts += _legend(fills, used, set(status.values()), MARGIN / 2, MARGIN)
    parts.append("</svg>")
    return "\n".join(parts) + "\n"

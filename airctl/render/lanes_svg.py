"""The lane view (:mod:`airctl.render.lanes`) drawn as one SVG: a column per stream, a row per step.

Plain ops are boxes in their stream's colour; scope, record and wait nodes are white pills with a
symbol (▶ enter, ■ exit, ● record, ◆ wait); a folded run is one box saying how many ops it holds
and which. Scopes are bands behind their lane's rows, record → wait arrows are red dashed lines
across lanes, and a finding outlines the op it is about (red for errors) with a ``<title>`` that
gives the rule and message; a race also gets a dotted arrow from the value read to its reader.

Every element from the graph carries ``data-node`` (the node's name) and ``data-lane``/``data-row``,
so tools and tests can find it; everything taken from the graph goes through
:func:`airctl.render.text.esc`.
"""

from __future__ import annotations

from collections import Counter

from airctl.graph.roles import Role
from airctl.io.gc_pause import gc_paused
from airctl.render.lanes import Lanes, Mark
from airctl.render.style import EDGE_STYLE, NODE_STROKE, stream_fills, stream_label
from airctl.render.text import clip, esc

LANE_W, GAP, ROW_H, BOX_H = 250, 28, 26, 20  # px; boxes sit 3 px below their row's top
TOP, LEFT = 84, 16
FOLDED = ", folded: a row per run of ops (hover for its members)"
CHAR_W = 6.2  # average glyph width of the 11px labels
PILL_CHARS = int((LANE_W - 16 - 48 - 10) / CHAR_W)
SEVERITY = {"error": "#cf222e", "warning": "#bf8700", "info": "#0969da"}
SYMBOL = {Role.SCOPE_ENTER: "\u25b6", Role.SCOPE_EXIT: "\u25a0", Role.RECORD: "\u25cf", Role.WAIT: "\u25c6",
          Role.TAGGED_RECORD: "\u25cf", Role.TAGGED_WAIT: "\u25c6", Role.OUTPUT: "\u23cf"}
DEFS = ('<defs><marker id="arrow-sync" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="{sync}"/></marker>'
        '<marker id="arrow-race" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="{race}"/></marker></defs>')


def lane_x(lane: int) -> int:
    return LEFT + lane * (LANE_W + GAP)


def row_y(row: int) -> int:
    return TOP + row * ROW_H


def svg_size(view: Lanes) -> tuple[float, float]:
    """(width, height) of the SVG of ``view``."""
    return LEFT * 2 + len(view.streams) * (LANE_W + GAP) - GAP, TOP + max(view.rows, 1) * ROW_H + 24


def lanes_svg(view: Lanes) -> str:
    """The whole SVG document of ``view``."""
    with gc_paused():
        return _svg(view)


def _svg(view: Lanes) -> str:
    graph = view.graph
    fills = stream_fills(view.streams)
    width, height = svg_size(view)
    sync_colour = EDGE_STYLE["sync"][0]
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="Helvetica,Arial,sans-serif" font-size="11">',
        f"<title>{esc(graph.name)}: lane view, {len(view.streams)} streams, {len(graph)} nodes</title>",
        DEFS.replace("{sync}", sync_colour).replace("{race}", SEVERITY["error"]),
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>',
        f'<text x="{LEFT:.0f}" y="20" font-size="14" font-weight="bold">{esc(clip(graph.name, 80))}</text>',
        f'<text x="{LEFT:.0f}" y="36" fill="#57606a">lane view ({esc(view.mode)}): a column per stream, program '
        f'order top to bottom{FOLDED if view.is_folded() else ""}</text>',
        f'<text x="{LEFT:.0f}" y="50" fill="#57606a">bands: stream scopes \u00b7 red dashes: record \u2192 wait '
        f'\u00b7 red outline: a finding (hover for it) \u00b7 red dots: a racy read</text>',
    ]
    counts = Counter(view.lane)  # per lane, its nodes (-1: the nodes not drawn)
    for k, stream in enumerate(view.streams):
        x = lane_x(k)
        parts.append(f'<g class="lane" data-lane="{k}"><rect x="{x:.0f}" y="{TOP - 26:.0f}" width="{LANE_W:.0f}" '
                     f'height="{max(view.rows, 1) * ROW_H + 30:.0f}" fill="#f6f8fa" stroke="#d0d7de"/>'
                     f'<rect x="{x:.0f}" y="{TOP - 26:.0f}" width="{LANE_W:.0f}" height="20" fill="{fills[stream]}"/>'
                     f'<text x="{x + 8:.0f}" y="{TOP - 12:.0f}" font-weight="bold">'
                     f'{esc(clip(stream_label(stream), 30))} ({counts[k]})</text></g>')
    parts.append('<g class="bands">')
    for band in view.bands:
        x, y = lane_x(band.lane) + 3, row_y(band.top) - 1
        h = (band.bottom - band.top + 1) * ROW_H + 2
        enter = esc(graph.nodes[band.enter].name)
        parts.append(f'<rect class="band" data-stream="{esc(band.stream)}" data-node="{enter}" '
                     f'data-top="{band.top}" data-bottom="{band.bottom}" x="{x:.0f}" y="{y:.0f}" '
                     f'width="{LANE_W - 6:.0f}" height="{h:.0f}" rx="6" fill="{fills.get(band.stream, "#ddd")}" '
                     f'fill-opacity="0.45" stroke="{NODE_STROKE}" stroke-dasharray="5,3"/>')
    parts.append("</g>")
    parts += _boxes(view, fills)
    parts += _arrows(view, view.arrows, "sync", sync_colour, "5,3", 1.6)
    parts += _arrows(view, view.races, "race", SEVERITY["error"], "2,3", 1.6)
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _marks_by_node(marks: list[Mark]) -> dict[int, list[Mark]]:
    out: dict[int, list[Mark]] = {}
    for m in marks:
        out.setdefault(m.node, []).append(m)
    return out


def _boxes(view: Lanes, fills: dict[str | None, str]) -> list[str]:
    graph = view.graph
    marks = _marks_by_node(view.marks)
    out = ['<g class="nodes">']
    out += _runs(view, fills)
    lane_fill = [fills[s] for s in view.streams]
    lane_tip = [f"\nstream: {stream_label(s)}" for s in view.streams]
    ops: dict[str, str] = {}  # op -> escaped, clipped label part (ops repeat: escape each once)
    room = int((LANE_W - 26) / CHAR_W)
    lane, row, run, runs, roles = view.lane, view.row, view.run, view.runs, view.roles
    for i, node in enumerate(graph.nodes):
        k = lane[i]
        if k < 0 or (run[i] >= 0 and len(runs[run[i]].members) > 1):
            continue
        symbol = SYMBOL.get(roles[i])
        if symbol is not None or i in marks:
            out.append(_special_box(view, i, symbol, lane_fill[k], marks.get(i, [])))
            continue
        x, y = lane_x(k) + 8, row_y(row[i]) + 3
        tip = node.name + "\nop: " + node.op + lane_tip[k]
        if node.module:
            tip += "\nmodule: " + node.module
        if node.source:
            tip += "\nsource: " + node.source
        name = clip(node.name, room)
        op = ops.get(node.op)
        if op is None:
            op = ops[node.op] = esc(" " + node.op)
        label = f'<tspan font-weight="bold">{esc(name)}</tspan><tspan fill="#57606a">{op}</tspan>'
        if len(name) + len(node.op) + 1 > room:  # no room for all of the op: clip it
            label = (f'<tspan font-weight="bold">{esc(name)}</tspan><tspan fill="#57606a">'
                     f'{esc(clip(" " + node.op, max(room - len(name), 0))) if room > len(name) + 3 else ""}</tspan>')
        out.append(f'<g class="node op" data-node="{esc(node.name)}" data-lane="{k}" data-row="{row[i]}"><title>'
                   f'{esc(tip)}</title><rect x="{x}" y="{y}" width="{LANE_W - 16}" height="{BOX_H}" rx="3" '
                   f'fill="{lane_fill[k]}" stroke="{NODE_STROKE}" stroke-width="1"/><text x="{x + 6}" y="{y + 14}">'
                   f'{label}</text></g>')
    out.append("</g>")
    return out


def _runs(view: Lanes, fills: dict[str | None, str]) -> list[str]:
    graph, out = view.graph, []
    chars = int((LANE_W - 24) / CHAR_W)
    for r, run in enumerate(view.runs):
        if len(run.members) < 2:
            continue
        x, y = lane_x(run.lane) + 8, row_y(run.row) + 3
        names = ", ".join(graph.nodes[i].name for i in run.members[:20])
        more = f" and {len(run.members) - 20} more" if len(run.members) > 20 else ""
        first = graph.nodes[run.members[0]].name
        out.append(f'<g class="run" data-run="{r}" data-node="{esc(first)}" data-nodes="{len(run.members)}" '
                   f'data-lane="{run.lane}" data-row="{run.row}"><title>{esc(names + more)}</title>'
                   f'<rect x="{x}" y="{y}" width="{LANE_W - 16}" height="{BOX_H}" rx="3" '
                   f'fill="{fills[view.streams[run.lane]]}" stroke="{NODE_STROKE}" stroke-dasharray="3,2"/>'
                   f'<text x="{x + 6}" y="{y + 14}">{esc(clip(run.label(graph), chars))}</text></g>')
    return out


def _special_box(view: Lanes, i: int, symbol: str | None, fill: str, mine: list[Mark]) -> str:
    """A scope/record/wait pill, or an op with findings (outlined, a "!" on the op a finding is about)."""
    node, k = view.graph.nodes[i], view.lane[i]
    x, y, w = lane_x(k) + 8, row_y(view.row[i]) + 3, LANE_W - 16
    if symbol and not mine:  # the common case: a scope, record or wait pill without findings
        tip = f"{node.name}\nop: {node.op}\nstream: {stream_label(view.streams[k])}"
        return (f'<g class="node {view.roles[i].value}" data-node="{esc(node.name)}" data-lane="{k}" '
                f'data-row="{view.row[i]}"><title>{esc(tip)}</title><rect x="{x + 24}" y="{y}" width="{w - 48}" '
                f'height="{BOX_H}" rx="10" fill="#ffffff" stroke="#6e7781" stroke-width="1.0"/><text x="{x + 30}" '
                f'y="{y + 14}"><tspan font-weight="bold">{esc(clip(symbol + " " + node.name, PILL_CHARS))}</tspan>'
                f'</text></g>')
    primary = [m for m in mine if m.primary]
    worst = min((m.severity for m in mine), key=lambda s: list(SEVERITY).index(s) if s in SEVERITY else 9,
                default=None)
    stroke, width_, dash = NODE_STROKE, 1.0, ""
    if worst is not None:
        stroke = SEVERITY.get(worst, NODE_STROKE)
        width_, dash = (3.0, "") if primary else (2.0, ' stroke-dasharray="4,2"')
    if symbol:
        x, w, fill = x + 24, w - 48, "#ffffff"
        stroke = stroke if worst is not None else "#6e7781"
    tip = [node.name, f"op: {node.op}", f"stream: {stream_label(view.streams[k])}"]
    if node.module:
        tip.append(f"module: {node.module}")
    if node.source:
        tip.append(f"source: {node.source}")
    tip += [f"{m.severity} {m.rule}: {m.message}" for m in mine]
    kind = view.roles[i].value if symbol else "op"
    badge, tx = "", x + 6
    if primary:
        badge = (f'<circle cx="{x + 10}" cy="{y + BOX_H // 2}" r="7" fill="{stroke}"/>'
                 f'<text x="{x + 10}" y="{y + 14}" fill="#ffffff" font-weight="bold" text-anchor="middle">!</text>')
        tx += 16
    room = int((x + w - tx - 4) / CHAR_W)
    name = clip(f"{symbol} {node.name}" if symbol else node.name, room)
    op = "" if symbol else clip(" " + node.op, max(room - len(name), 0)) if room > len(name) + 3 else ""
    label = f'<tspan font-weight="bold">{esc(name)}</tspan><tspan fill="#57606a">{esc(op)}</tspan>'
    return (f'<g class="node {kind}{" marked" if mine else ""}" data-node="{esc(node.name)}" data-lane="{k}" '
            f'data-row="{view.row[i]}"{_rules(primary)}><title>{esc(chr(10).join(tip))}</title>'
            f'<rect x="{x}" y="{y}" width="{w}" height="{BOX_H}" rx="{10 if symbol else 3}" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{width_}"{dash}/>'
            f'{badge}<text x="{tx}" y="{y + 14}">{label}</text></g>')


def _rules(primary: list[Mark]) -> str:
    return f' data-rules="{esc(" ".join(dict.fromkeys(m.rule for m in primary)))}"' if primary else ""


def _arrows(view: Lanes, pairs: list[tuple[int, int]], kind: str, colour: str, dash: str, width: float) -> list[str]:
    if not pairs:
        return []
    graph = view.graph
    out = [f'<g class="arrows-{kind}" fill="none" stroke="{colour}" stroke-width="{width}" stroke-dasharray="{dash}">']
    for s, d in pairs:
        if view.lane[s] < 0 or view.lane[d] < 0:
            continue
        ls, ld = view.lane[s], view.lane[d]
        ys, yd = row_y(view.row[s]) + ROW_H / 2, row_y(view.row[d]) + ROW_H / 2
        if ls == ld:
            x = lane_x(ls) + LANE_W - 10
            path = f"M{x:.0f} {ys:.0f}C{x + 30:.0f} {ys:.0f} {x + 30:.0f} {yd:.0f} {x:.0f} {yd:.0f}"
        else:
            right = ld > ls
            xs = lane_x(ls) + (LANE_W - 28 if right else 28)
            xd = lane_x(ld) + (28 if right else LANE_W - 28)
            path = f"M{xs:.0f} {ys:.0f}L{xd:.0f} {yd:.0f}"
        out.append(f'<path class="arrow {kind}" data-from="{esc(graph.nodes[s].name)}" '
                   f'data-to="{esc(graph.nodes[d].name)}" d="{path}" marker-end="url(#arrow-{kind})"/>')
    out.append("</g>")
    return out

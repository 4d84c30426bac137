"""The timeline picture: one lane per stream, a box per op, an arrow per sync edge, a time axis.

Drawn by hand as SVG (no plotting dependency). One panel per graph, showing its representative
step (the median span, as the summaries). Every text from the graph (node names, ops, sources) is
escaped: graphs are untrusted input. :func:`svg_to_png` renders the SVG with headless Chromium
when a PNG is wanted (Debian ``chromium``, already used by the report tests).
"""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path

from airctl.errors import AirctlError
from airctl.escape import markup as escape
from airctl.execute.timeline import Timeline
from airctl.external import TOOL_TIMEOUT_ENV, run_command, tool_timeout
from airctl.profile import events as ev

WIDTH = 1200
LABEL_W = 150
LANE_H = 30
AXIS_H = 26
TITLE_H = 24
PAD = 12
CHAR_W = 6.6  # average glyph width of the 11px sans-serif labels
PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#bab0ac"]
SYNC_COLOR = {"record_wait": "#d62728", "event": "#d62728", "fork": "#7f7f7f", "join": "#7f7f7f", "data": "#1f77b4"}


def format_time(seconds: float) -> str:
    """Human units for an axis label.

    >>> format_time(0.0025), format_time(2e-5), format_time(1.5)
    ('2.5 ms', '20 µs', '1.5 s')
    """
    a = abs(seconds)
    if a >= 1 or a == 0:
        return f"{seconds:.3g} s" if a else "0"
    if a >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def _ticks(lo: float, hi: float, target: int = 8) -> list[float]:
    width = hi - lo
    if width <= 0:
        return [lo]
    raw = width / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def _fit(text: str, width: float) -> str:
    room = int(width / CHAR_W)
    if room < 3:
        return ""
    return text if len(text) <= room else text[: room - 1] + "…"


def _panel(t: Timeline, y0: float, colors: dict[str, str]) -> tuple[list[str], float]:
    step = ev.representative_step(t)
    events = ev.step_events(t, step) if step is not None else []
    lanes = {s: i for i, s in enumerate(t.streams())}
    lo, hi = ev.span(events)  # the axis covers the ops; its labels are times from the step's start
    scale = (WIDTH - LABEL_W - 4 * PAD) / (hi - lo) if hi > lo else 1.0

    def x(sec: float) -> float:
        return LABEL_W + PAD + (sec - lo) * scale

    parts = [f'<text x="{PAD}" y="{y0 + 16}" class="title">{escape(t.graph)} ({escape(t.mode)}), '
             f'step {step if step is not None else "-"}: ops span {escape(format_time(hi - lo))}</text>']
    top = y0 + TITLE_H
    lanes_y = top + AXIS_H
    for tick in _ticks(lo, hi):
        tx = x(tick)
        parts.append(f'<line x1="{tx:.1f}" y1="{top + AXIS_H - 6}" x2="{tx:.1f}" '
                     f'y2="{lanes_y + LANE_H * len(lanes)}" class="grid"/>')
        parts.append(f'<text x="{tx:.1f}" y="{top + 12}" class="tick">{escape(format_time(tick))}</text>')
    for stream, i in lanes.items():
        y = lanes_y + i * LANE_H
        parts.append(f'<rect x="0" y="{y}" width="{WIDTH}" height="{LANE_H}" class="lane{i % 2}"/>')
        label = escape(_fit("stream " + stream, LABEL_W - PAD))
        parts.append(f'<text x="{PAD}" y="{y + LANE_H / 2 + 4}" class="lane">{label}</text>')
    for e in events:
        y = lanes_y + lanes[e.stream] * LANE_H + 4
        x0, w = x(e.start_s), max((e.end_s - e.start_s) * scale, 1.0)
        tip = f"{e.node} = {e.op}\nstream {e.stream}, {format_time(e.end_s - e.start_s)}" + \
              (f"\n{e.source}" if e.source else "")
        marker = ev.is_marker(e.op)  # record/wait/scope: drawn hollow, a wait's box is blocked time
        fill = "none" if marker else colors[e.stream]
        parts.append(f'<g><title>{escape(tip)}</title><rect x="{x0:.2f}" y="{y}" width="{w:.2f}" '
                     f'height="{LANE_H - 8}" rx="2" fill="{fill}" class="{"marker" if marker else "op"}"/>')
        label = "" if marker else _fit(e.node, w - 4)
        if label:
            parts.append(f'<text x="{x0 + 2:.2f}" y="{y + LANE_H / 2}" class="oplabel">{escape(label)}</text>')
        parts.append("</g>")
    for sync, i, j in ev.resolved_syncs(t, step, events) if step is not None else ():
        src, dst = events[i], events[j]
        y1 = lanes_y + lanes[src.stream] * LANE_H + LANE_H / 2
        y2 = lanes_y + lanes[dst.stream] * LANE_H + LANE_H / 2
        color = SYNC_COLOR.get(sync.kind, "#d62728")
        parts.append(f'<g><title>{escape(f"{sync.kind}: {src.node} → {dst.node}")}</title>'
                     f'<line x1="{x(src.end_s):.2f}" y1="{y1}" x2="{x(max(dst.start_s, src.end_s)):.2f}" y2="{y2}" '
                     f'stroke="{color}" '
                     f'class="sync" marker-end="url(#arrow)"/></g>')
    for r in t.races:
        reader = next((e for e in events if e.node == r.reader), None)
        if reader is None:
            continue
        y = lanes_y + lanes[reader.stream] * LANE_H
        msg = f"race: {r.reader} ({r.reader_source or '?'}) reads {r.producer} ({r.producer_source or '?'}) unordered"
        parts.append(f'<g><title>{escape(msg)}</title><line x1="{x(reader.start_s):.2f}" y1="{y}" '
                     f'x2="{x(reader.start_s):.2f}" y2="{y + LANE_H}" class="race"/></g>')
    return parts, TITLE_H + AXIS_H + LANE_H * len(lanes) + PAD


def render_svg(timelines: list[Timeline], title: str | None = None) -> str:
    """The picture as an SVG document (a string)."""
    streams: dict[str, None] = {}
    for t in timelines:
        streams.update(dict.fromkeys(t.streams()))
    colors = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(streams)}
    body: list[str] = []
    y = PAD + (TITLE_H if title else 0)
    for t in timelines:
        parts, height = _panel(t, y, colors)
        body += parts
        y += height
    if not timelines:
        body.append(f'<text x="{PAD}" y="{y + 16}" class="title">no timed ops</text>')
        y += TITLE_H
    head = f'<text x="{PAD}" y="{PAD + 14}" class="head">{escape(title)}</text>' if title else ""
    style = (".title{font:bold 12px sans-serif}.head{font:bold 14px sans-serif}.tick{font:10px sans-serif;"
             "fill:#555;text-anchor:middle}.lane{font:11px sans-serif}.oplabel{font:11px sans-serif;fill:#fff;"
             "dominant-baseline:middle;pointer-events:none}.grid{stroke:#ddd}.lane0{fill:#fafafa}.lane1{fill:#f0f0f0}"
             ".op{stroke:#333;stroke-width:.5}.marker{stroke:#777;stroke-dasharray:2 2}"
             ".sync{stroke-width:1.5}.race{stroke:#e00;stroke-width:3;"
             "stroke-dasharray:4 2}")
    height = int(y + PAD)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}">\n<style>{style}</style>\n'
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>\n'
            f'<rect width="{WIDTH}" height="{height}" fill="#fff"/>\n{head}\n' + "\n".join(body) + "\n</svg>\n")


def svg_size(svg: str) -> tuple[int, int]:
    import re

    m = re.search(r'width="(\d+)" height="(\d+)"', svg)
    return (int(m.group(1)), int(m.group(2))) if m else (WIDTH, 600)


def svg_to_png(svg_path: Path, png_path: Path, timeout_s: float = 60.0) -> Path:
    """Render an SVG file to PNG with headless Chromium (``chromium --headless --screenshot``)."""
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if browser is None:
        raise AirctlError("cannot write a PNG: no chromium found", file=str(png_path),
                          hint="install Debian `chromium`, or keep the SVG (open it in any browser)")
    width, height = svg_size(svg_path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="airctl-chromium-") as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--user-data-dir={profile}", f"--window-size={width},{height}",
               f"--screenshot={png_path.absolute()}", svg_path.absolute().as_uri()]
        limit = tool_timeout(timeout_s)
        done = run_command(cmd, timeout_s=limit)  # its own process group: chromium's helpers go with it
        if done.timed_out:
            raise AirctlError(f"chromium took more than {limit:g} s to render the PNG ({TOOL_TIMEOUT_ENV} sets "
                              "the limit)", file=str(png_path), hint="keep the SVG, or retry")
    if not png_path.is_file():
        raise AirctlError(f"chromium wrote no PNG (exit {done.returncode}): {done.stderr.strip()[-300:]}",
                          file=str(png_path), hint="keep the SVG (open it in any browser)")
    return png_path

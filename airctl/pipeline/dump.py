"""``airctl dump``: read one graph (compiling a model script first), fold it, write it in another format.

Text formats (json, fx, pbtxt, txt) come back as text, and are written to ``out`` when given;
pictures go to a file always: dot/svg/png through :func:`airctl.render.render_to`, html through
the report's single-graph viewer (:func:`airctl.report.page.graph_page`).

``lanes`` is the lane view of the stream plan (:mod:`airctl.render.lanes`), with the verifier's
findings for the graph marked; the suffix of ``out`` picks the picture: ``.svg`` (default,
``<stem>.lanes.svg``), ``.png`` (the SVG through headless Chromium) or ``.html`` (the viewer opened
on its lane pane). Its semantics follow ``mode``: the ledger's own mode when SOURCE is a ledger and
no mode is given. ``collapse`` folds the lane view into runs (one row per run of ops of a module or
of a stream) instead of folding the graph; graphs of
:data:`~airctl.render.lanes.FOLD_LIMIT` nodes or more are folded by module unless told.

>>> dump_source(Path("graph.pbtxt"), GraphFormat.FX).text          # doctest: +SKIP
'MatMul = MatMul(arg0_1:0, arg0_1:0, None)  # stream=stream_1\\n...'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from airctl.errors import AirctlError
from airctl.graph.model import Graph
from airctl.modes import MAX_AUTOTUNE, GraphFormat

LANE_SUFFIXES = (".svg", ".png", ".html")
MAX_PNG_PIXELS = 30_000  # the taller side of a lane PNG; Chromium screenshots stop well before 64k


@dataclass
class DumpOutcome:
    graph: Graph  # what was written (after --collapse)
    format: GraphFormat
    text: str | None  # the text of a text format; None for pictures
    written: Path | None  # the file written, if any
    note: str | None = None  # one line about the picture (the lane view: streams, arrows, findings)


def dump_source(source: Path, fmt: GraphFormat | str, *, stage: str | None = None, out: Path | None = None,
                mode: str | None = None, collapse: str | None = None, depth: int = 2) -> DumpOutcome:
    """Read ``source`` (file, ledger stage, or model script) and turn it into ``fmt``.

    A picture without ``out`` goes to ``<source stem>.<fmt>`` in the working directory.
    """
    from airctl.ledger.defaults import Request, StageRequest
    from airctl.pipeline.source import load_source

    fmt = GraphFormat(fmt)
    graph = load_source(source, stage, StageRequest(Request.DUMP, output_type=str(fmt)), mode=mode or MAX_AUTOTUNE)
    if fmt is GraphFormat.LANES:
        return dump_lanes(graph, source, out, mode or _ledger_mode(source) or MAX_AUTOTUNE, collapse, depth)
    if collapse:
        from airctl.render.collapse import collapse as fold

        graph = fold(graph, collapse, depth)
    if not fmt.is_text:
        target = Path(out) if out is not None else Path(f"{Path(source).stem or 'graph'}.{fmt.value}")
        draw(graph, fmt, target)
        return DumpOutcome(graph, fmt, None, target)
    text = graph_text(graph, fmt)
    if out is not None:
        Path(out).write_text(text, encoding="utf-8")
    return DumpOutcome(graph, fmt, text, Path(out) if out is not None else None)


def graph_text(graph: Graph, fmt: GraphFormat) -> str:
    if fmt is GraphFormat.FX:
        from airctl.io.listing import format_listing

        return format_listing(graph)
    from airctl.io.read import write_graph

    return write_graph(graph, fmt.value)


def draw(graph: Graph, fmt: GraphFormat, out: Path) -> Path:
    from airctl.render import output_file, render_to

    if fmt is GraphFormat.HTML:
        from airctl.report.page import graph_page

        output_file(out).write_text(graph_page(graph), encoding="utf-8")
        return out
    return render_to(graph, fmt.value, out)


def _ledger_mode(source: Path | str) -> str | None:
    from airctl.ledger.reader import Ledger

    path = Path(source)
    if path.is_dir() and Ledger.is_ledger(path):
        return Ledger.open(path).index.run_mode
    return None


def dump_lanes(graph: Graph, source: Path | str, out: Path | None, mode: str, fold: str | None,
               depth: int) -> DumpOutcome:
    """Write the lane view of ``graph`` (svg, png or html by the suffix of ``out``)."""
    from airctl.render import output_file
    from airctl.render.lanes import FOLD_LIMIT, build_lanes
    from airctl.render.lanes_svg import lanes_svg, svg_size
    from airctl.verify import verify

    target = Path(out) if out is not None else Path(f"{Path(source).stem or 'graph'}.lanes.svg")
    suffix = target.suffix.lower()
    if suffix not in LANE_SUFFIXES:
        raise AirctlError(f"--type lanes writes svg, png or html, not {target.suffix or 'a file without suffix'!r}",
                          file=str(target), hint="name the output plan.svg, plan.png or plan.html")
    output_file(target)
    findings = verify(graph, MAX_AUTOTUNE if graph.dialect == "ge" else mode)
    view = build_lanes(graph, mode, findings, fold=fold or ("module" if len(graph) >= FOLD_LIMIT else None),
                       depth=depth)
    if suffix == ".html":
        from airctl.report.page import graph_page

        target.write_text(graph_page(graph, mode=mode, pane="lanes"), encoding="utf-8")
    elif suffix == ".svg":
        target.write_text(lanes_svg(view), encoding="utf-8")
    else:
        if max(svg_size(view)) > MAX_PNG_PIXELS:
            raise AirctlError(f"the lane view is {max(svg_size(view)):.0f} px on a side, too big for a PNG",
                              file=str(target), hint="write plan.svg or plan.html, or fold it: --collapse module")
        from airctl.profile.timeline_svg import svg_to_png

        tmp = target.with_name(target.name + ".svg")
        tmp.write_text(lanes_svg(view), encoding="utf-8")
        try:
            svg_to_png(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    return DumpOutcome(graph, GraphFormat.LANES, None, target, _note(view))


def _note(view) -> str:  # noqa: ANN001 - Lanes, imported lazily
    streams = ", ".join("default" if s is None else str(s) for s in view.streams)
    errors = sum(1 for m in view.marks if m.primary and m.severity == "error")
    marked = len({m.node for m in view.marks if m.primary})
    folded = f", {len(view.runs)} runs folded" if view.is_folded() else ""
    return (f"lanes ({view.mode}): {len(view.streams)} streams ({streams}), {len(view.arrows)} record\u2192wait "
            f"arrows, {marked} ops marked by findings ({errors} errors){folded}")

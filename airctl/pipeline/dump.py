"""``airctl dump``: read one graph (compiling a model script first), fold it, write it in another format.

Text formats (json, fx, pbtxt, txt) come back as text, and are written to ``out`` when given;
pictures go to a file always: dot/svg/png through :func:`airctl.render.render_to`, html through
the report's single-graph viewer (:func:`airctl.report.page.graph_page`).

>>> dump_source(Path("graph.pbtxt"), GraphFormat.FX).text          # doctest: +SKIP
'MatMul = MatMul(arg0_1:0, arg0_1:0, None)  # stream=stream_1\\n...'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from airctl.graph.model import Graph
from airctl.modes import MAX_AUTOTUNE, GraphFormat


@dataclass
class DumpOutcome:
    graph: Graph  # what was written (after --collapse)
    format: GraphFormat
    text: str | None  # the text of a text format; None for pictures
    written: Path | None  # the file written, if any


def dump_source(source: Path, fmt: GraphFormat | str, *, stage: str | None = None, out: Path | None = None,
                mode: str = MAX_AUTOTUNE, collapse: str | None = None, depth: int = 2) -> DumpOutcome:
    """Read ``source`` (file, ledger stage, or model script) and turn it into ``fmt``.

    A picture without ``out`` goes to ``<source stem>.<fmt>`` in the working directory.
    """
    from airctl.ledger.defaults import Request, StageRequest
    from airctl.pipeline.source import load_source

    fmt = GraphFormat(fmt)
    graph = load_source(source, stage, StageRequest(Request.DUMP, output_type=str(fmt)), mode=mode)
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
    if fmt is GraphFormat.MODEL_EXPLORER:
        from airctl.io.model_explorer import write_model_explorer

        return write_model_explorer(graph)
    from airctl.io.read import write_graph

    return write_graph(graph, fmt.value)


def draw(graph: Graph, fmt: GraphFormat, out: Path) -> Path:
    from airctl.render import output_file, render_to

    if fmt is GraphFormat.HTML:
        from airctl.report.page import graph_page

        output_file(out).write_text(graph_page(graph), encoding="utf-8")
        return out
    return render_to(graph, fmt.value, out)

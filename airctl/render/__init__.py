"""Draw a graph: DOT text, or SVG/PNG (Graphviz for small graphs, airctl's own layered layout for big
ones).

``airctl dump --type {dot,svg,png}`` and ``airctl diff --svg`` call :func:`render_to`; the HTML
viewer (``--type html``, ``diff --html``) is the report's (:mod:`airctl.report.page`), which
draws with this package, not the other way round. ``status`` (node name ->
``added``/``removed``/``changed``) colours a diff. Every picture places scope, record and wait
nodes by program order (:mod:`airctl.render.order`). The lane view of a stream plan is
:mod:`airctl.render.lanes` (model) and :mod:`airctl.render.lanes_svg` (SVG). See docs/report.md.
"""

from __future__ import annotations

from pathlib import Path

from airctl.errors import AirctlError
from airctl.graph.model import Graph

TYPES = ("dot", "svg", "png")


def output_file(out: Path | str) -> Path:
    """``out`` as a Path, refused with a clear error when its folder does not exist."""
    out = Path(out)
    if not out.parent.is_dir():
        raise AirctlError(f"cannot write {out}: folder {out.parent} does not exist", file=str(out),
                          hint=f"create it first (mkdir -p {out.parent}) or choose another -o path")
    return out


def render_to(graph: Graph, type_: str, out: Path, status: dict[str, str] | None = None) -> Path:
    """Write ``graph`` to ``out`` as ``type_`` (dot, svg or png); returns ``out``."""
    from airctl.render import dot

    out = output_file(out)
    if type_ == "dot":
        out.write_text(dot.dot_source(graph, status), encoding="utf-8")
    elif type_ in ("svg", "png"):
        small = len(graph) < dot.DOT_LIMIT
        if small and dot.has_dot():
            dot.run_dot(dot.dot_source(graph, status), type_, out)
        elif type_ == "svg":
            from airctl.render.svg import write_svg

            write_svg(graph, out, status)
        elif small:
            raise AirctlError("--type png needs Graphviz's `dot`, which is not installed",
                              hint="apt-get install graphviz, or use --type svg or html")
        else:
            raise AirctlError(f"--type png: {len(graph)} nodes is too many for Graphviz (limit {dot.DOT_LIMIT})",
                              hint="use --type svg (airctl's own layout) or --type html (zoomable viewer)")
    else:
        raise AirctlError(f"unknown render type {type_!r}", hint=f"choose one of: {', '.join(TYPES)}")
    return out


__all__ = ["TYPES", "output_file", "render_to"]

"""Draw a graph: DOT text, SVG/PNG (Graphviz for small graphs, airctl's own layered layout for big
ones), or a standalone HTML viewer (the report's viewer with a single stage).

``airctl dump --type {dot,svg,png,html}`` and ``airctl diff --svg/--html`` call :func:`render_to`.
``status`` (node name -> ``added``/``removed``/``changed``) colours a diff. See docs/report.md.
"""

from __future__ import annotations

from pathlib import Path

from airctl.errors import AirctlError
from airctl.graph.model import Graph

TYPES = ("dot", "svg", "png", "html")


def render_to(graph: Graph, type_: str, out: Path, status: dict[str, str] | None = None,
              title: str | None = None) -> Path:
    """Write ``graph`` to ``out`` as ``type_`` (dot, svg, png or html); returns ``out``."""
    from airctl.render import dot

    out = Path(out)
    if not out.parent.is_dir():
        raise AirctlError(f"cannot write {out}: folder {out.parent} does not exist", file=str(out),
                          hint=f"create it first (mkdir -p {out.parent}) or choose another -o path")
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
    elif type_ == "html":
        from airctl.report.page import graph_page

        out.write_text(graph_page(graph, status=status, title=title), encoding="utf-8")
    else:
        raise AirctlError(f"unknown render type {type_!r}", hint=f"choose one of: {', '.join(TYPES)}")
    return out


__all__ = ["TYPES", "render_to"]

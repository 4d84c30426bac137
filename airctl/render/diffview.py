"""One picture of a diff: graph B plus A's removed nodes, each node tagged added/removed/changed.

Used by ``airctl diff --svg`` (the HTML variant, :func:`airctl.report.page.diff_page`, shows A and
B as two stages instead). Removed nodes keep their edges, with their inputs renamed through the
matching, so they sit where they were; a removed name that B reuses gets a `` (removed)`` suffix.
"""

from __future__ import annotations

from dataclasses import replace

from airctl.diff import DiffReport
from airctl.graph.model import Graph, Node


def merged_graph(a: Graph, b: Graph, report: DiffReport) -> tuple[Graph, dict[str, str]]:
    """(B plus A's removed nodes, node name -> added/removed/changed)."""
    status: dict[str, str] = {n.name: "added" for n in report.added}
    status.update({c.name: "changed" for c in report.changed})
    renamed = dict(report.renamed)
    taken = {n.name for n in b.nodes}
    ghost: dict[str, str] = {}
    for n in report.removed:
        name = n.name if n.name not in taken else f"{n.name} (removed)"
        while name in taken:
            name += "'"
        taken.add(name)
        ghost[n.name] = name

    def where(ref: str) -> str:
        producer = Node.producer(ref)
        if producer in ghost:
            return ghost[producer]
        return renamed.get(producer, producer)

    extra = []
    for n in report.removed:
        extra.append(replace(n, name=ghost[n.name], inputs=[where(r) for r in n.inputs if r],
                             control_inputs=[where(r) for r in n.control_inputs]))
        status[ghost[n.name]] = "removed"
    merged = Graph(b.name, b.dialect, list(b.nodes) + extra, dict(b.attrs))
    return merged, status

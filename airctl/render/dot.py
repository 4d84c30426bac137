"""Graphviz DOT for small graphs: streams as coloured clusters, a legend, distinct edge styles.

``dot`` lays out a few hundred nodes beautifully but grows as about n^2.6 (reference/spike.md §3),
so :func:`airctl.render.render_to` only hands it graphs below :data:`DOT_LIMIT` nodes. The DOT
text itself can be written for any size (``--type dot``), for use with ``sfdp`` and friends.

Side-effect nodes (scope, record, wait) are tied to the ops around them by light dotted *order*
edges (:mod:`airctl.render.order`): the anchor edge has a high ``weight``, so ``dot`` puts a
``scope_enter`` right above the scope's first op, a record right under the op it follows and a
wait right above the op it precedes; a ``scope_enter`` is clustered with the stream it opens.

Node ids are ``n<index>``; names, ops and tooltips are quoted DOT strings (``"`` and ``\\``
escaped), and Graphviz XML-escapes them in its SVG, so graph contents never become markup.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from airctl.errors import AirctlError
from airctl.external import TOOL_TIMEOUT_ENV, run_command, tool_timeout
from airctl.graph.model import Graph
from airctl.render.order import program_order
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
from airctl.render.text import printable

DOT_LIMIT = 2000  # nodes; dot takes 7-8 s at 2k nodes and 82 s at 5k
DOT_TIMEOUT = 120.0


def quote(text: object) -> str:
    """A DOT double-quoted string; backslashes are doubled so ``\\n``/``\\l`` escapes in names stay literal."""
    s = printable(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "")
    return f'"{s}"'


def _clusters(graph: Graph, cluster: str, streams: list[str | None]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i, n in enumerate(graph.nodes):
        key = streams[i] if cluster == "stream" else n.module
        if key:
            groups.setdefault(key, []).append(i)
    return groups


def pick_cluster(graph: Graph) -> str:
    """Cluster by stream when the graph uses more than one, else by module when nodes have one."""
    if any(n.stream for n in graph.nodes):
        return "stream"
    if any(n.module for n in graph.nodes):
        return "module"
    return "none"


def dot_source(graph: Graph, status: dict[str, str] | None = None, cluster: str | None = None) -> str:
    status = status or {}
    cluster = cluster or pick_cluster(graph)
    order = program_order(graph)
    streams = order.streams
    used = list(dict.fromkeys(streams))
    fills = stream_fills(used)
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    lines = [
        "digraph airctl {",  # Graphviz copies the graph id into an SVG comment: keep names out of it
        '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, newrank=true];',
        f'  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, color="{NODE_STROKE}"];',
        '  edge [arrowsize=0.6];',
    ]

    def node_line(i: int) -> str:
        n = graph.nodes[i]
        opens = [f"opens stream: {stream_label(streams[i])}"] if streams[i] != n.stream else []
        attrs = [f"label={quote(n.op + chr(10) + n.name)}", f'fillcolor="{fills[streams[i]]}"',
                 f"tooltip={quote(node_tooltip(n, *opens))}"]
        if collective_note(n.op):
            attrs += [f'color="{COLLECTIVE_STROKE}"', "peripheries=2"]
        st = status.get(n.name)
        if st:
            style = "rounded,filled,dashed" if st == "removed" else "rounded,filled"
            attrs += [f'color="{STATUS_STROKE[st]}"', "penwidth=3", f'style="{style}"']
        return f"  n{i} [{', '.join(attrs)}];"

    clustered: set[int] = set()
    if cluster != "none":
        for k, (key, members) in enumerate(_clusters(graph, cluster, streams).items()):
            label = f"{cluster}: {key}"
            colour = fills.get(key, "#f8f9fa") if cluster == "stream" else "#f8f9fa"
            lines.append(f"  subgraph cluster_{k} {{")
            lines.append(f'    label={quote(label)}; style="dashed,rounded"; color="{NODE_STROKE}"; '
                         f'bgcolor="{colour}40";')
            lines += ["  " + node_line(i) for i in members]
            lines.append("  }")
            clustered.update(members)
    lines += [node_line(i) for i in range(len(graph.nodes)) if i not in clustered]
    for e in graph.edges():
        colour, dash, width = EDGE_STYLE[e.kind]
        style = ', style="dashed"' if dash else ""
        lines.append(f'  n{index[e.src]} -> n{index[e.dst]} [color="{colour}", penwidth={width}{style}];')
    colour, _dash, width = EDGE_STYLE["order"]
    for s, d, weight in order.edges:
        lines.append(f'  n{s} -> n{d} [color="{colour}", penwidth={width}, style="dotted", arrowsize=0.4, '
                     f'weight={weight}, class="order"];')
    lines += _legend(used, fills, set(status.values()))
    lines.append("}")
    return "\n".join(lines) + "\n"


_LINE = {"order": "· · ·"}


def _legend(used: list[str | None], fills: dict[str | None, str], statuses: set[str]) -> list[str]:
    rows = [f'<TR><TD BGCOLOR="{fills[s]}">  </TD><TD ALIGN="LEFT">{_html_text(stream_label(s))}</TD></TR>'
            for s in used]
    rows += [f'<TR><TD><FONT COLOR="{c}">{_LINE[k] if k in _LINE else "- - -" if d else "———"}</FONT></TD>'
             f'<TD ALIGN="LEFT">{k} edge</TD></TR>' for k, (c, d, _w) in EDGE_STYLE.items()]
    rows += [f'<TR><TD BORDER="2" COLOR="{STATUS_STROKE[s]}">  </TD><TD ALIGN="LEFT">{s}</TD></TR>'
             for s in ("added", "removed", "changed") if s in statuses]
    table = f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2">{"".join(rows)}</TABLE>>'
    return ["  subgraph cluster_legend {", '    label="legend"; style="rounded"; color="#adb5bd";',
            f"    legend [shape=plaintext, style=\"\", label={table}];", "  }"]


def _html_text(text: str) -> str:
    """Text inside a Graphviz HTML-like label (only the stream names reach it)."""
    from airctl.render.text import esc

    return esc(text)


def has_dot() -> bool:
    return shutil.which("dot") is not None


def run_dot(source: str, fmt: str, out: Path) -> None:
    """Render DOT text with the ``dot`` binary into ``out`` (``fmt``: svg or png). dot prints the picture
    and airctl writes the file, so a folder that cannot be written is an OSError naming ``out``, not a
    dot failure; dot runs in its own process group, at most ``$AIRCTL_TOOL_TIMEOUT`` (default 120 s)."""
    exe = shutil.which("dot")
    if exe is None:
        raise AirctlError("Graphviz's `dot` is not installed", hint="apt-get install graphviz (or use --type html)")
    limit = tool_timeout(DOT_TIMEOUT)
    done = run_command([exe, f"-T{fmt}"], input=source.encode("utf-8"), timeout_s=limit, keep_stdout=True)
    if done.timed_out:
        raise AirctlError(f"dot did not finish in {limit:g} s ({TOOL_TIMEOUT_ENV} sets the limit)", file=str(out),
                          hint="use --type html, which lays out big graphs itself")
    if done.returncode != 0:
        raise AirctlError(f"dot failed: {done.stderr.strip()[:500]}", file=str(out),
                          hint="write --type dot and run Graphviz yourself to see the full error")
    out.write_bytes(done.output)

"""``airctl diff``: what changed between two graphs, matched by structure rather than by name (docs/diff.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

HELP = (
    "Compare two graphs: added, removed and changed nodes (op, stream, attributes) and added or removed "
    "data/control/sync edges. Nodes are matched by structure, so renumbered names (Add_1 → Add_2, mm → mm_1) "
    "and reordered inputs do not show up as changes.\n\n"
    "A and B are TorchAir dumps, graph .json files or ledger folders. With one ledger, --from and --to pick "
    "two of its stages (default: the first AOT stage and the last FX stage, i.e. what every pass did). "
    "Exit status 0 whatever the differences; 2 for unreadable input.\n\n"
    "[bold]Examples[/bold]\n\n"
    "  airctl diff dynamo_original_graph_1.pbtxt dynamo_optimized_graph_1.txt\n\n"
    "  airctl diff airctl-runs/<run-id> --from aot --to fx-final --json\n\n"
    "  airctl diff before.json after.json --html diff.html --svg diff.svg\n"
)


def register(app: typer.Typer) -> None:
    @app.command("diff", help=HELP, no_args_is_help=True)
    def diff_cmd(
        a: Path = typer.Argument(..., help="Old graph: dump, .json, or ledger folder.", show_default=False),
        b: Path = typer.Argument(None, help="New graph (omit to compare two stages of ledger A).",
                                 show_default=False),
        from_stage: str = typer.Option(None, "--from", help="Stage of A (ledger).", show_default=False),
        to_stage: str = typer.Option(None, "--to", help="Stage of B, or of A when B is omitted.",
                                     show_default=False),
        as_json: bool = typer.Option(False, "--json", help="Print the report as JSON on stdout."),
        html: Path = typer.Option(None, "--html", help="Also write a standalone HTML view: A and B as two steps, "
                                  "B coloured by the diff.", show_default=False),
        svg: Path = typer.Option(None, "--svg", help="Also write an SVG of B with A's removed nodes, coloured "
                                 "(green added, red removed, orange changed).", show_default=False),
    ) -> None:
        from airctl.cli.output import err, print_json

        old, new = load_pair(a, b, from_stage, to_stage)
        report = diff_pair(old, new)
        # files first: a closed pipe on stdout (`| head`) must not lose them
        if html is not None:
            from airctl.report.page import diff_page

            html.write_text(diff_page(old, new, report), encoding="utf-8")
            err.print(f"wrote {html}")
        if svg is not None:
            from airctl.render import render_to
            from airctl.render.diffview import merged_graph

            merged, status = merged_graph(old, new, report)
            render_to(merged, "svg", svg, status=status)
            err.print(f"wrote {svg}")
        if as_json:
            print_json(report.to_json())
        else:
            render(report)


def run_diff(a: Path, b: Path | None, from_stage: str | None, to_stage: str | None) -> Any:
    return diff_pair(*load_pair(a, b, from_stage, to_stage))


def diff_pair(old: Any, new: Any) -> Any:
    from airctl.diff import diff_graphs

    return diff_graphs(old, new)


def load_pair(a: Path, b: Path | None, from_stage: str | None, to_stage: str | None) -> tuple[Any, Any]:
    """The two graphs to compare: two sources, or two stages of ledger ``a`` (defaults: docs/ledger.md)."""
    from airctl.errors import AirctlError
    from airctl.io.source import is_ledger
    from airctl.ledger.defaults import Request, StageRequest
    from airctl.ledger.reader import Ledger
    from airctl.pipeline.source import load_source

    if b is None:
        if not is_ledger(a):
            raise AirctlError("diff needs two graphs, or one ledger folder with --from/--to", file=str(a),
                              hint="airctl diff OLD NEW  |  airctl diff LEDGER --from STAGE --to STAGE")
        ledger = Ledger.open(a)
        old = ledger.load(ledger.find_stage(from_stage, request=Request.DIFF_FROM))
        # FX against GE matches nothing: the new side defaults to the old side's dialect
        new = ledger.load(ledger.find_stage(to_stage, request=StageRequest(Request.DIFF_TO, dialect=old.dialect)))
    else:
        old = load_source(a, from_stage, Request.DIFF_SOURCE)
        new = load_source(b, to_stage, Request.DIFF_SOURCE)
    return old, new


def _fmt(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."


def render(report: Any) -> None:
    from rich.markup import escape

    from airctl.cli.output import out

    s = report.summary()
    out.print(f"[bold]{escape(report.a_name)}[/bold] ({report.a_nodes} nodes) → "
              f"[bold]{escape(report.b_name)}[/bold] ({report.b_nodes} nodes): "
              f"[green]{s['added']} added[/green], [red]{s['removed']} removed[/red], "
              f"[yellow]{s['changed']} changed[/yellow], edges [green]+{s['edges_added']}[/green] "
              f"[red]-{s['edges_removed']}[/red]"
              + (f", {s['renamed']} renamed" if s["renamed"] else ""))
    if report.empty:
        out.print("no structural differences")
        return
    for n in report.added:
        stream = f"  stream={escape(n.stream)}" if n.stream else ""
        out.print(f"[green]+ {escape(n.name)}  {escape(n.op)}{stream}[/green]")
    for n in report.removed:
        stream = f"  stream={escape(n.stream)}" if n.stream else ""
        out.print(f"[red]- {escape(n.name)}  {escape(n.op)}{stream}[/red]")
    for c in report.changed:
        was = f" (was {escape(c.old_name)})" if c.old_name != c.name else ""
        out.print(f"[yellow]~ {escape(c.name)}{was}  {escape(c.op)}[/yellow]")
        for key, change in c.changes.items():
            if key == "attrs":
                for attr, v in change.items():
                    out.print(f"[yellow]    attr {escape(attr)}: {escape(_fmt(v['old']))} → "
                              f"{escape(_fmt(v['new']))}[/yellow]")
            else:
                out.print(f"[yellow]    {key}: {escape(_fmt(change['old']))} → {escape(_fmt(change['new']))}[/yellow]")
    for src, dst, kind in report.edges_added:
        out.print(f"[green]+ edge {escape(src)} → {escape(dst)}  ({kind})[/green]")
    for src, dst, kind in report.edges_removed:
        out.print(f"[red]- edge {escape(src)} → {escape(dst)}  ({kind})[/red]")

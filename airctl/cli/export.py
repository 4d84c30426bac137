"""``airctl export FORMAT RUN``: a ledger in another tool's format (thin; the work is in :mod:`airctl.pipeline.export`).

``tlparse``: torch's TORCH_TRACE structured log, rendered by ``tlparse LOG -o DIR``. (Model
Explorer's graph JSON is a graph format: ``airctl dump RUN --type model-explorer``.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command
from airctl.cli.named_run import IN_RUNS, NamedRun
from airctl.cli.shown import Shown

HELP = (
    "Write a ledger in another tool's format.\n\n"
    "[bold]airctl export tlparse RUN[/bold]: torch's TORCH_TRACE structured log (one per rank), which "
    "`tlparse LOG -o OUT` renders as HTML: each graph's Dynamo and AOT graphs, every stage that changed it "
    "(FX passes, GE graphs), the verifier's findings and node counts. For Model Explorer use "
    "`airctl dump RUN --type model-explorer`.\n"
)


def register(app: typer.Typer) -> None:
    export_app = typer.Typer(name="export", help=HELP, no_args_is_help=True)

    @command(export_app, "tlparse", json="Print what was written as JSON on stdout.")
    def tlparse_cmd(
        which: NamedRun = IN_RUNS,
        out: Path = typer.Option(None, "--out", "-o", help="Folder for the log (default: <ledger>/torch_trace).",
                                 show_default=False),
    ) -> Shown:
        """Write the ledger as a TORCH_TRACE log for tlparse."""
        from airctl.pipeline.export import export_tlparse

        result = export_tlparse(which.root, out)
        return Shown(result, lambda: _render(result))

    app.add_typer(export_app)


def _render(result: Any) -> None:
    from airctl.cli.output import err, escape, out

    err.print(escape(f"wrote {result.records} records for {result.graphs} graph(s); render with: "
                     f"tlparse {result.files[0]} -o {result.files[0].parent / 'tlparse'} --no-browser"),
              highlight=False)
    for f in result.files:
        out.print(escape(f), highlight=False)

"""``airctl export FORMAT RUN``: a ledger in another tool's format (thin; the work is in :mod:`airctl.pipeline.export`).

``tlparse``: torch's TORCH_TRACE structured log, rendered by ``tlparse LOG -o DIR``. (Model
Explorer's graph JSON is a graph format: ``airctl dump RUN --type model-explorer``.)
"""

from __future__ import annotations

from pathlib import Path

import typer

from airctl.cli.options import run_argument, run_option, runs_option

HELP = (
    "Write a ledger in another tool's format.\n\n"
    "[bold]airctl export tlparse RUN[/bold]: torch's TORCH_TRACE structured log (one per rank), which "
    "`tlparse LOG -o OUT` renders as HTML: each graph's Dynamo and AOT graphs, every stage that changed it "
    "(FX passes, GE graphs), the verifier's findings and node counts. For Model Explorer use "
    "`airctl dump RUN --type model-explorer`.\n"
)


def register(app: typer.Typer) -> None:
    export_app = typer.Typer(name="export", help=HELP, no_args_is_help=True)

    @export_app.command("tlparse")
    def tlparse_cmd(
        run: str = run_argument(),
        run_opt: str = run_option("The run, as RUN (every command takes --run)."),
        runs: Path = runs_option(),
        out: Path = typer.Option(None, "--out", "-o", help="Folder for the log (default: <ledger>/torch_trace).",
                                 show_default=False),
        json_out: bool = typer.Option(False, "--json", help="Print what was written as JSON on stdout."),
    ) -> None:
        """Write the ledger as a TORCH_TRACE log for tlparse."""
        from airctl.cli.output import err, escape, print_json
        from airctl.cli.output import out as stdout
        from airctl.pipeline.export import export_tlparse
        from airctl.pipeline.source import resolve_source

        result = export_tlparse(resolve_source(run, run_opt, out_dir=runs, option="--runs").path, out)
        if json_out:
            print_json(result.to_json())
            return
        err.print(escape(f"wrote {result.records} records for {result.graphs} graph(s); render with: "
                         f"tlparse {result.files[0]} -o {result.files[0].parent / 'tlparse'} --no-browser"),
                  highlight=False)
        for f in result.files:
            stdout.print(escape(f), highlight=False)

    app.add_typer(export_app)

"""``airctl dump``: print or write one graph (a TorchAir dump, a graph JSON, a ledger stage) in another format."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.options import mode_option, out_option, run_option
from airctl.cli.target import EVERY_MODE, MODEL_SCRIPT, EveryMode
from airctl.modes import GraphFormat, Mode

HELP = help_text(
    "Read a graph and print it as JSON, an FX-style listing, TorchAir pbtxt or GE txt; or render it.\n\n"
    "SOURCE is a TorchAir dump (.pbtxt, .txt, .py), an airctl graph .json, or a ledger folder; without it, the "
    "current run (the last `airctl compile`/`passes apply`; --run picks another). In a ledger, --stage picks the "
    "stage; the default follows --type: pbtxt and txt print the last GE graph (TorchAir's own "
    "file: txt and pbtxt are kept by default; a reduce-overhead or npugraph_ex run has no GE graph, so "
    "there they are airctl's rendering of the final FX graph, and the note says so), fx the final FX graph "
    "(docs/ledger.md).",
    "airctl dump --type pbtxt",
    "airctl dump dynamo_optimized_graph_1.pbtxt --type json",
    "airctl dump airctl-runs/<run-id> --stage fx-final --type fx",
    "airctl dump graph.json --type pbtxt -o graph.pbtxt",
    "airctl dump airctl-runs/<run-id> --stage fx-final --type svg --collapse module --depth 2 -o g.svg",
    "airctl dump airctl-runs/<run-id> --stage fx-final --type lanes -o plan.svg   (or plan.png, plan.html)",
)


def register(app: typer.Typer) -> None:
    @command(app, "dump", help=HELP, modes_panel=MODEL_SCRIPT, json=None)
    def dump_cmd(
        source: Path = typer.Argument(None, help="Dump file, graph .json, a run (id, part of one, `latest`, "
                                      "`latest~N`, folder), or model script (compiled first). Default: the current "
                                      "run.", show_default=False),
        mode: Mode | None = mode_option(None, help="Mode for a model script SOURCE (default max-autotune) and the "
                                        "semantics of --type lanes (default: the ledger's mode)."),
        type_: GraphFormat = typer.Option(GraphFormat.JSON, "--type", "-t",
                                          help="Output: text (json, fx, pbtxt, txt, model-explorer: Model "
                                               "Explorer's graph JSON) or a picture (dot, svg, png, html; written "
                                               "to -o, default SOURCE-stem.TYPE); lanes: the lane view of the "
                                               "stream plan, svg/png/html by the -o suffix (default "
                                               "SOURCE-stem.lanes.svg)."),
        stage: str = typer.Option(None, "--stage", "-s", help="Ledger stage name or index.", show_default=False),
        out: Path = typer.Option(None, "--out", "-o", help="Write here instead of stdout.", show_default=False),
        collapse: str = typer.Option(None, "--collapse", help="Fold the graph before output: `module` (one box per "
                                     "nn.Module path, --depth parts) or `stream` (one box per run of a stream). "
                                     "Record/wait/scope nodes stay. For big graphs. With --type lanes: one row per "
                                     "run of ops of a module (or a stream).", show_default=False),
        depth: int = typer.Option(2, "--depth", min=1, help="Module path parts kept by --collapse module."),
        force: bool = typer.Option(False, "--force", help="Accepted for old scripts: -o overwrites an ordinary file "
                                   "anyway (never an input or a ledger)."),
        run: str = run_option(),
        runs: Path = out_option("Folder of ledgers where the current run is.", "--runs"),
        every: EveryMode = EVERY_MODE,
    ) -> None:
        from airctl.cli.output import err, escape, stdout_to_stderr
        from airctl.escape import controls
        from airctl.pipeline.dump import dump_source

        del force  # accepted for old scripts; it changes nothing
        with stdout_to_stderr():  # the result is what goes to stdout; a model script's prints go to stderr
            result = dump_source(source, type_, stage=stage, out=out, mode=mode,
                                 collapse=collapse, depth=depth, run=run, runs_dir=runs, every=every)
        for note in result.notes:
            err.print(escape(f"dump: {note}"), highlight=False)
        if result.written is not None:
            err.print(escape(f"wrote {result.written}"), highlight=False)
        elif result.text is not None:  # a terminal gets no control character from the file; a pipe, its bytes
            terminal = _terminal()
            text = controls(result.text) if terminal else result.text
            typer.echo(text, nl=not text.endswith("\n"), color=not terminal)  # color: click strips none


def _terminal() -> bool:
    """Is stdout a terminal (not rich's ``is_terminal``, which ``FORCE_COLOR`` turns on for a pipe)?"""
    return sys.stdout.isatty()

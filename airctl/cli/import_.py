"""``airctl import DIR|FILE...``: TorchAir's files from an NPU machine become a ledger (thin; the work is
:func:`airctl.pipeline.importing.import_artifacts`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.options import out_option
from airctl.cli.shown import Shown
from airctl.modes import Mode

HELP = help_text(
    "Make a ledger from what TorchAir left on an NPU machine, so report.html, dump, diff, check and profile "
    "work on it as on a run airctl made.\n\n"
    "Give the folders or files you copied: TorchAir's DEBUG log (the script's stdout with "
    "logger.setLevel(logging.DEBUG), or torch_compile_debug/run_*/torchair/debug.log), the "
    "config.debug.graph_dump files (dynamo_{original,optimized}_graph_N_rank_R_*.pbtxt/.txt/.py), the "
    "torch_compile_debug/ folder (TORCH_COMPILE_DEBUG=1), a saved `graph():` listing, and the profiler's "
    "*_ascend_pt folders. Each compiled graph gets the stages TorchAir's files show, in TorchAir's order; graphs "
    "of several ranks (rank_N in the file names) get ids rank<N>-<k>-<kind>. Nothing is compiled or run.",
    "airctl import from-npu/",
    "airctl import train.log graph_dump/ torch_compile_debug/ --out runs/",
)


def register(app: typer.Typer) -> None:
    @command(app, "import", help=HELP, no_args_is_help=True, json="Print index.json (and problems) as JSON on stdout.")
    def import_cmd(
        paths: list[Path] = typer.Argument(..., help="Folders or files TorchAir wrote.", show_default=False),
        out: Path = out_option("Folder for ledgers (one run per subfolder)."),
        mode: Mode | None = typer.Option(None, "--mode", help="The mode the graphs were compiled in (default: "
                                         "what the files show: the log's options, the dump kinds)."),
        verify: bool = typer.Option(True, "--verify/--no-verify", help="Run the static verifier after every "
                                    "imported pass stage (findings in index.json and the report)."),
        report: bool = typer.Option(True, "--report/--no-report", help="Write report.html."),
    ) -> Shown:
        from airctl.pipeline.importing import ImportRequest, import_artifacts

        result = import_artifacts(ImportRequest(paths=list(paths), out_dir=out, mode=mode,
                                                verify=verify, report=report))
        return Shown(result, lambda: _render(result))


def _render(result: Any) -> None:
    """The stage table of each imported graph, what the import noticed, and where the ledger is."""
    from airctl.cli.output import err, escape, out
    from airctl.cli.summary import stage_table, why_line

    index = result.index.to_json()
    for graph in index["graphs"]:
        out.print(stage_table(graph, measured=False))
    for note in result.notes:
        err.print(escape(f"note: {note}"), highlight=False)
    for problem in result.problems:
        err.print(escape(f"warning: {problem}"), highlight=False)
    findings = index.get("findings") or []
    stages = sum(len(g["stages"]) for g in index["graphs"])
    err.print(f"imported {len(index['graphs'])} graph(s), {stages} stage(s), {len(index.get('dumps') or [])} "
              f"TorchAir dump(s), {len(index.get('profiles') or [])} profile(s); verifier: {len(findings)} "
              f"finding(s) (`airctl check` on the ledger shows them)", markup=False, highlight=False)
    line = why_line(result.index)  # graph breaks, recompiles, recaptures, cache misses in the logs
    if line is not None:
        err.print(line, markup=False, highlight=False)
    out.print(f"ledger: {escape(result.ledger_dir)}")

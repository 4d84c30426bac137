"""``airctl check PATH``: the static multi-stream verifier on a graph, a ledger or a dump.

Thin by design (style.md §8): parse options, call :func:`airctl.pipeline.check.check_source`,
render. Findings go to stdout (or JSON with ``--json``), the summary to stderr. Error-level
findings raise :class:`~airctl.errors.FindingsExit` (exit 1); unreadable input raises
``GraphReadError``, which main.py shows with its file and line (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command
from airctl.cli.options import out_option, run_option
from airctl.cli.shown import Shown
from airctl.cli.target import EVERY_MODE, MODEL_SCRIPT, EveryMode
from airctl.modes import Mode


def register(app: typer.Typer) -> None:
    @command(app, "check", modes_panel=MODEL_SCRIPT, json="Print the findings as JSON on stdout.")
    def check(
        path: Path = typer.Argument(None, help="airctl graph .json, a run (id, part of one, `latest`, `latest~N`, "
                                    "folder; imported ones too), TorchAir "
                                    ".pbtxt/.txt dump, TorchAir DEBUG log, graph() listing, or model .py. Default: "
                                    "the current run (its stream plan).", show_default=False),
        mode: Mode | None = typer.Option(None, "--mode", help="Semantics to check against (default: the ledger's "
                                         "mode, else max-autotune; GE graphs are always max-autotune)."),
        stage: str | None = typer.Option(None, "--stage", help="Ledger stage to check (default: fx-final, else "
                                         "the last FX stage, else the last GE stage)."),
        passes: Path | None = typer.Option(None, "--passes", help="YAML pass file (model scripts: compile first)."),
        max_memory_increase: str = typer.Option(None, "--max-memory-increase", show_default=False,
                                                help="Also an error when the run's stream plan raises the predicted "
                                                     "device memory peak by more than this (bytes: 1MiB; or 10% of "
                                                     "the single-stream peak), naming the tensors it keeps alive."),
        run: str = run_option(),
        out: Path = out_option("Folder of ledgers where the current run is."),
        every: EveryMode = EVERY_MODE,
    ) -> Shown:
        """Verify the stream plan: scopes, record/wait, cross-stream races, joins, deadlocks.

        With no PATH: the current run (the last `airctl compile` or `passes apply` in --out)."""
        from airctl.io.gc_pause import gc_paused, graph_files_only
        from airctl.pipeline.check import check_source

        # a graph file is only read and checked: no collections meanwhile (airctl/io/gc_pause.py)
        with gc_paused(passes is None and graph_files_only(path), settle=True):
            outcome = check_source(path, mode=mode, stage=stage, passes=passes, run=run,
                                   runs_dir=out, max_memory_increase=max_memory_increase,
                                   every=every)
        return Shown(outcome, lambda: _render_outcome(outcome), lambda: _verdict(outcome))


def _render_outcome(outcome: Any) -> None:
    from airctl.cli.output import err

    for graph in outcome.graphs:
        _render(graph.label, graph.mode, graph.findings)
    err.print(f"{outcome.count('error')} error(s), {outcome.count('warning')} warning(s), "
              f"{outcome.count('info')} note(s) in {len(outcome.graphs)} graph(s)")


def _verdict(outcome: Any) -> None:
    from airctl.errors import FindingsExit

    if outcome.count("error"):
        raise FindingsExit(outcome.count("error"))


_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _render(label: str, mode: Mode | None, findings: list) -> None:
    """Each distinct finding once (rule and source line), with how many nodes share it."""
    from airctl.cli.output import escape, out
    from airctl.io.paths import shareable

    out.print(f"[bold]{escape(label)}[/bold] [dim]({mode or 'plan'})[/dim]: "
              + (f"{len(findings)} finding(s)" if findings else "no findings"))
    alike: dict[tuple, list] = {}
    for f in findings:
        alike.setdefault((f.severity, f.rule, f.source), []).append(f)
    for same in alike.values():
        f = same[0]
        where = f"{escape(shareable(f.source))}: " if f.source else ""  # relative to the working directory
        ref = f" {f.ref}" if f.ref else ""
        more = (f" [dim](×{len(same)} at this line: "
                + escape(", ".join("/".join(x.nodes[:2][::-1]) for x in same[:6]) + (" …" if len(same) > 6 else ""))
                + "; --json lists each)[/dim]") if len(same) > 1 else ""
        out.print(f"  {where}[{_STYLE.get(f.severity, '')}]{f.severity}[/]\\[{f.rule}{ref}]: "
                  f"{escape(shareable(f.message))}{more}")
        if f.hint:
            out.print(f"    [cyan]hint:[/cyan] {escape(shareable(f.hint))}")

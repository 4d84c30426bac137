"""``airctl check PATH``: the static multi-stream verifier on a graph, a ledger or a dump.

Thin by design (style.md §8): parse options, call :func:`airctl.pipeline.check.check_source`,
render. Findings go to stdout (or JSON with ``--json``), the summary to stderr. Error-level
findings raise :class:`~airctl.errors.FindingsExit` (exit 1); unreadable input raises
``GraphReadError``, which main.py shows with its file and line (exit 2).
"""

from __future__ import annotations

from pathlib import Path

import typer

from airctl.modes import Mode


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check(
        path: Path = typer.Argument(..., help="airctl graph .json, ledger folder (imported ones too), TorchAir "
                                    ".pbtxt/.txt dump, TorchAir DEBUG log, graph() listing, or model .py"),
        mode: Mode | None = typer.Option(None, "--mode", help="Semantics to check against (default: the ledger's "
                                         "mode, else max-autotune; GE graphs are always max-autotune)."),
        stage: str | None = typer.Option(None, "--stage", help="Ledger stage to check (default: fx-final, else "
                                         "the last FX stage, else the last GE stage)."),
        passes: Path | None = typer.Option(None, "--passes", help="YAML pass file (model scripts: compile first)."),
        json_out: bool = typer.Option(False, "--json", help="Print only JSON on stdout."),
    ) -> None:
        """Verify the stream plan: scopes, record/wait, cross-stream races, joins, deadlocks."""
        from airctl.cli.output import err, print_json
        from airctl.errors import FindingsExit
        from airctl.pipeline.check import check_source

        outcome = check_source(path, mode=mode.value if mode else None, stage=stage, passes=passes)
        if json_out:
            print_json(outcome.to_json())
        else:
            for graph in outcome.graphs:
                _render(graph.label, graph.mode, graph.findings)
            err.print(f"{outcome.count('error')} error(s), {outcome.count('warning')} warning(s), "
                      f"{outcome.count('info')} note(s) in {len(outcome.graphs)} graph(s)")
        if outcome.count("error"):
            raise FindingsExit(outcome.count("error"))


_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _render(label: str, mode: str, findings: list) -> None:
    from rich.markup import escape

    from airctl.cli.output import out

    out.print(f"[bold]{escape(label)}[/bold] [dim]({mode})[/dim]: "
              + (f"{len(findings)} finding(s)" if findings else "no findings"))
    for f in findings:
        where = f"{escape(f.source)}: " if f.source else ""
        ref = f" {f.ref}" if f.ref else ""
        out.print(f"  {where}[{_STYLE.get(f.severity, '')}]{f.severity}[/]\\[{f.rule}{ref}]: {escape(f.message)}")
        if f.hint:
            out.print(f"    [cyan]hint:[/cyan] {escape(f.hint)}")

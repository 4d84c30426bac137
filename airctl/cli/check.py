"""``airctl check PATH``: the static multi-stream verifier on a graph, a ledger or a dump.

Thin by design (style.md §8): parse options, load the graphs (:mod:`airctl.verify.inputs`), run
:func:`airctl.verify.verify`, render. Findings go to stdout (or JSON with ``--json``), the summary
to stderr. Exit code 1 when any error-level finding exists; unreadable input raises
``GraphReadError`` and main.py maps it to exit code 2.
"""

from __future__ import annotations

import enum
from pathlib import Path

import typer

from airctl.errors import ExitCode


class Mode(str, enum.Enum):
    max_autotune = "max-autotune"
    reduce_overhead = "reduce-overhead"


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check(
        path: Path = typer.Argument(..., help="airctl graph .json, ledger folder, TorchAir .pbtxt/.txt dump, "
                                    "or model .py"),
        mode: Mode | None = typer.Option(None, "--mode", help="Semantics to check against (default: the ledger's "
                                         "mode, else max-autotune; GE graphs are always max-autotune)."),
        stage: str | None = typer.Option(None, "--stage", help="Ledger stage to check (default: fx-final, else "
                                         "the last FX stage)."),
        passes: Path | None = typer.Option(None, "--passes", help="YAML pass file (model scripts: compile first)."),
        json_out: bool = typer.Option(False, "--json", help="Print only JSON on stdout."),
    ) -> None:
        """Verify the stream plan: scopes, record/wait, cross-stream races, joins, deadlocks."""
        from airctl.cli.output import err, print_json
        from airctl.pipeline.source import check_targets
        from airctl.verify.findings import MAX_AUTOTUNE, Finding, count, summary_json
        from airctl.verify.verifier import verify

        targets = check_targets(path, stage=stage, passes=passes, mode=mode.value if mode else None)
        findings: list[Finding] = []
        for t in targets:
            used = mode.value if mode else (t.mode or MAX_AUTOTUNE)
            if t.graph.dialect == "ge":
                used = MAX_AUTOTUNE
            for f in verify(t.graph, used):
                f.graph = t.label
                findings.append(f)
            if not json_out:
                _render(t.label, used, [f for f in findings if f.graph == t.label])
        errors = count(findings, "error")
        if json_out:
            print_json(summary_json(findings))
        else:
            err.print(f"{errors} error(s), {count(findings, 'warning')} warning(s), "
                      f"{count(findings, 'info')} note(s) in {len(targets)} graph(s)")
        if errors:
            # SystemExit, not typer.Exit: main.run() calls the app with standalone_mode=False, where typer
            # *returns* an Exit's code and run() drops it; SystemExit reaches the shell and CliRunner alike.
            raise SystemExit(int(ExitCode.FINDINGS))


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

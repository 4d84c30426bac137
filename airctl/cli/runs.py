"""``airctl runs`` and ``airctl show``: the ledgers of an ``--out`` folder, and one run's summary again.

Which run is current, and how ``--run`` names one, is :mod:`airctl.ledger.runs`; ``show`` prints
what ``airctl compile`` printed at the end of that run (:mod:`airctl.cli.summary`).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.named_run import IN_OUT, NamedRun
from airctl.cli.options import out_option
from airctl.cli.output import escape
from airctl.cli.shown import Shown

RUNS_HELP = help_text(
    "The runs (ledgers) in --out, newest first: id, model, mode, pass file, status, whether the outputs matched "
    "eager, stream races, how long it took. The current run — what `dump`, `diff`, `check`, `profile` and "
    "`passes apply` use when given no source — is marked with *.",
    "airctl runs",
    "airctl runs --out other-runs/ --json",
)
SHOW_HELP = help_text(
    "Print a run's summary again, as `airctl compile` printed it: stages per graph, dumps, verifier findings, "
    "the eager check, races, `airctl why`'s table (graph breaks, recompiles, recaptures, cache misses), timings, "
    "status and error. RUN is a run id from `airctl runs` (a unique part is "
    "enough) or a ledger folder; default: the current run.",
    "airctl show",
    "airctl show 20261123-1418 --json",
    "airctl show --node mm_10        # where node, GE op or task mm_10 comes from",
    "airctl show --assignment        # each final FX node: GE op(s), fused away, captured, kept in Python",
    "airctl show --kernels prof/     # which source lines spent the profiled device kernel time",
    "airctl show --phases            # where the command's time went",
    "airctl show --options           # the options given, and which stage each changed",
)


def register(app: typer.Typer) -> None:
    @command(app, "runs", help=RUNS_HELP, json="Print the list as JSON on stdout.")
    def runs_cmd(out: Path = out_option("Folder of ledgers.")) -> Shown:
        from airctl.ledger.runs import list_runs

        rows = list_runs(out)
        return Shown({"out": str(out), "runs": [r.to_json() for r in rows]}, lambda: render_runs(rows, out))

    @command(app, "show", help=SHOW_HELP, json="Print the run's index.json on stdout (with a view option: that "
             "view's result; with several, an object of them by option name).")
    def show_cmd(
        which: NamedRun = IN_OUT,
        all_stages: bool = typer.Option(False, "--all", help="Also list the passes that changed nothing."),
        verbose: bool = typer.Option(False, "--verbose", "-v",
                                     help="Also list the findings of earlier stages that a later pass fixed."),
        node: str = typer.Option(None, "--node", metavar="NAME",
                                 help="The origin chain of NAME (an FX node of any stage, a Dynamo node, a GE op or "
                                      "a profiled task): task, GE op, FX node per stage, the pass that created, "
                                      "moved or removed it, the Dynamo node, the source line."),
        assignment: bool = typer.Option(False, "--assignment", help="Where each node of each graph's final FX "
                                        "stage went: converted to which GE op(s), fused away, captured or fallen "
                                        "back (aclgraph), kept in Python, stream control; static kernel, super "
                                        "kernel scope; totals by category; GE's compile statistics checked."),
        kernels: Path = typer.Option(None, "--kernels", metavar="PROFILER_DIR", show_default=False,
                                     help="A torch_npu profiler folder of this run: its device kernel time mapped "
                                          "to source lines through the run's chains (share, per line), and what "
                                          "does not map, with the reason."),
        phases: bool = typer.Option(False, "--phases", help="Where the command's time went: start-up, backend, "
                                    "Dynamo, AOT, each pass, FX->GE, GE compile/capture and first run, finish."),
        options: bool = typer.Option(False, "--options", help="Every option given: where it was set, whether it "
                                     "reached TorchAir, which stage it changed."),
    ) -> Shown:
        from airctl.cli.output import render_error
        from airctl.cli.summary import print_summary
        from airctl.errors import AirctlError
        from airctl.ledger.reader import Ledger

        root = which.root
        if node is not None or assignment or kernels is not None or phases or options:
            from airctl.cli import show_views
            from airctl.pipeline import show

            return Shown(*_views(((node is not None, "node", lambda: show.node_chains(root, node),
                                   show_views.print_chains),
                                  (assignment, "assignment", lambda: show.assignment(root),
                                   show_views.print_assignment),
                                  (kernels is not None, "kernels", lambda: show.kernels(root, kernels),
                                   show_views.print_kernels),
                                  (phases, "phases", lambda: show.phases(root), show_views.print_phases),
                                  (options, "options", lambda: show.options(root), show_views.print_options))))
        index = Ledger.open(root).index

        def view() -> None:
            print_summary(SimpleNamespace(index=index, ledger_dir=root), show_all=all_stages, verbose=verbose,
                          why=True)
            if index.error:  # its file:line and hint, as the run printed it
                detail = index.error_detail or {}
                render_error(AirctlError(index.error, file=detail.get("file"), line=detail.get("line"),
                                         hint=detail.get("hint")))

        return Shown(index, view)


def _views(table: tuple[tuple[bool, str, Any, Any], ...]) -> tuple[Any, Any]:
    """The views of ``show`` asked for (wanted, option, compute, render): the JSON, one view's result or
    an object of them by option, and the terminal's, each view drawn as soon as it is computed (a later
    one that fails leaves the earlier ones shown)."""
    wanted = [(name, compute, render) for asked, name, compute, render in table if asked]

    class Views:
        def to_json(self) -> Any:
            found = {name: compute() for name, compute, _ in wanted}
            return next(iter(found.values())) if len(found) == 1 else found

    def view() -> None:
        for _, compute, render in wanted:
            render(compute())

    return Views(), view


def render_runs(rows: list[Any], folder: Path) -> None:
    """One line per run, columns aligned (no table borders: long ids and names stay on one line); the
    unreadable ones named on stderr."""
    from airctl.cli.output import err, out, seconds

    if not rows:
        err.print(f"no run in {escape(str(folder))} yet — start with `airctl compile MODEL.py`")
        return
    cells = [("", "run", "command", "mode", "passes", "status", "eager", "races", "time")]
    styles = []
    for r in rows:
        eager = {True: "match", False: "DIFFER", None: "–"}[r.matches_eager]
        cells.append(("*" if r.current else "", r.id, (r.command or "?").replace("passes ", ""), r.mode or "–",
                      Path(r.passes).name if r.passes else "–", r.status or "?", eager, str(r.races),
                      seconds(r.seconds) or "–"))
        styles.append({"ok": "green", "planned": "green", "running": "yellow"}.get(r.status or "", "red"))
    widths = [max(len(row[k]) for row in cells) for k in range(len(cells[0]))]
    for n, row in enumerate(cells):
        parts = [escape(v.ljust(w) if k < 7 else v.rjust(w)) for k, (v, w) in enumerate(zip(row, widths, strict=True))]
        if n == 0:
            out.print("[bold]" + "  ".join(parts).rstrip() + "[/bold]")
            continue
        parts[5] = f"[{styles[n - 1]}]{parts[5]}[/]"
        if row[6] == "DIFFER":
            parts[6] = f"[red]{parts[6]}[/red]"
        out.print("  ".join(parts).rstrip())
    out.print("[dim]* the current run (what dump, diff, check, profile and passes apply use by default)[/dim]")
    for r in rows:
        if r.status == "unreadable":
            err.print(f"{escape(r.id)}: [bold red]unreadable:[/bold red] {escape(r.error or '')}")

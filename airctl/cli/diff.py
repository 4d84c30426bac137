"""``airctl diff``: what changed between two graphs, matched by structure rather than by name (docs/diff.md).

The command parses options, calls :func:`airctl.pipeline.diff.diff_sources` and renders its report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.options import out_option
from airctl.cli.shown import Shown
from airctl.cli.target import EVERY_MODE, MODEL_SCRIPT, EveryMode

HELP = help_text(
    "Compare two graphs: added, removed and changed nodes (op, stream, attributes) and added or removed "
    "data/control/sync edges. Nodes are matched by structure, so renumbered names (Add_1 → Add_2, mm → mm_1) "
    "and reordered inputs do not show up as changes.\n\n"
    "A and B are TorchAir dumps, graph .json files, ledger folders or run ids (from `airctl runs`; a unique part "
    "of one; `latest`: the current run). With one ledger, --from and --to pick two of its stages (default: the "
    "first AOT stage and the last FX stage, i.e. what every pass did). With none, the current run; `--run X` "
    "another run. Two runs (`RUN_A RUN_B`, or the same as `--run RUN_A --run RUN_B`) are compared stage by "
    "stage: their graphs and stages pair by name and each stage that differs gets its diff "
    "(--from/--to: just those stages; one of them: the same stage of both). "
    "Exit status 0 whatever the differences; 2 for unreadable input.",
    "airctl diff                      (what the passes did in the current run)",
    "airctl diff <run-id-1> <run-id-2>   (what a pass file changed: two runs, stage by stage)",
    "airctl diff --run <run-id-1> --run latest   (the same, as options)",
    "airctl diff dynamo_original_graph_1.pbtxt dynamo_optimized_graph_1.txt",
    "airctl diff airctl-runs/<run-id> --from aot --to fx-final --json",
    "airctl diff before.json after.json --html diff.html --svg diff.svg",
)


def register(app: typer.Typer) -> None:
    @command(app, "diff", help=HELP, modes_panel=MODEL_SCRIPT, json="Print the report as JSON on stdout.")
    def diff_cmd(
        a: Path = typer.Argument(None, metavar="A", show_default=False,
                                 help="Old graph: dump, .json, ledger folder or run id. Default: the current run."),
        b: Path = typer.Argument(None, metavar="B", show_default=False,
                                 help="New graph or run (omit to compare two stages of ledger A)."),
        from_stage: str = typer.Option(None, "--from", help="Stage of A (ledger).", show_default=False),
        to_stage: str = typer.Option(None, "--to", help="Stage of B, or of A when B is omitted.",
                                     show_default=False),
        html: Path = typer.Option(None, "--html", help="Also write a standalone HTML view: A and B as two steps, "
                                  "B coloured by the diff.", show_default=False),
        svg: Path = typer.Option(None, "--svg", help="Also write an SVG of B with A's removed nodes, coloured "
                                 "(green added, red removed, orange changed).", show_default=False),
        runs: list[str] = typer.Option(None, "--run", "-r", metavar="RUN", show_default=False,
                                       help="A run (id, part of one, folder or `latest`) instead of the current "
                                       "one; twice: two runs against each other, as RUN_A RUN_B."),
        out: Path = out_option("Folder of ledgers where the runs are."),
        force: bool = typer.Option(False, "--force", help="Accepted for old scripts: --html/--svg overwrite an "
                                   "ordinary file anyway (never an input or a ledger)."),
        every: EveryMode = EVERY_MODE,
    ) -> Shown:
        from airctl.cli.output import err, escape, stdout_to_stderr
        from airctl.io.gc_pause import gc_paused, graph_files_only
        from airctl.pipeline.diff import diff_sources

        del force  # accepted for old scripts; it changes nothing
        # the files are written first: a closed pipe on stdout (`| head`) must not lose them
        # a model script A or B is compiled first: its prints go to stderr; two graph files are only read and
        # compared: no collections meanwhile (airctl/io/gc_pause.py)
        with stdout_to_stderr(), gc_paused(graph_files_only(a, b), settle=True):
            outcome = diff_sources(a, b, from_stage=from_stage, to_stage=to_stage, html=html, svg=svg,
                                   runs=runs or (), runs_dir=out, every=every)
        for path in outcome.written:
            err.print(escape(f"wrote {path}"), highlight=False)
        return Shown(outcome, lambda: render_outcome(outcome))


def render_outcome(outcome: Any) -> None:
    """A diff in the terminal: two runs stage by stage, or one report (framed by what the user's passes
    and TorchAir's own did, for a run with YAML passes)."""
    if outcome.runs is not None:
        render_runs(outcome.runs)
        return
    if outcome.window is not None:
        render_window_head(outcome.window)
    render(outcome.report)
    if outcome.window is not None:
        render_window_tail(outcome.window)


def render_window_head(window: Any) -> None:
    """Plain ``airctl diff`` of a run with YAML passes: say that the diff is theirs."""
    from airctl.cli.output import escape, out

    out.print(f"your passes ({escape(', '.join(window.user_passes))}), graph {escape(window.before.graph_id)}: "
              f"{escape(window.before.name)} → {escape(window.after.name)}")


def render_window_tail(window: Any) -> None:
    """TorchAir's own passes that changed the graph, apart from the user's."""
    from airctl.cli.output import escape, out

    if window.torchair_inside:
        out.print(f"[yellow]also in this diff[/yellow]: TorchAir's own {escape(', '.join(window.torchair_inside))} "
                  "ran between your passes (--from/--to pick other stages)")
    if window.torchair_outside:
        out.print(f"[dim]TorchAir's own passes that changed the graph, not in this diff: "
                  f"{escape(', '.join(window.torchair_outside))}[/dim]")


RENAMES_SHOWN = 200


def _fmt(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."


def render(report: Any) -> None:
    from airctl.cli.output import escape, out
    from airctl.graph.model import GE_NAME_ATTRS

    s = report.summary()
    out.print(f"[bold]{escape(report.a_name)}[/bold] ({report.a_nodes} nodes) → "
              f"[bold]{escape(report.b_name)}[/bold] ({report.b_nodes} nodes): "
              f"[green]{s['added']} added[/green], [red]{s['removed']} removed[/red], "
              f"[yellow]{s['changed']} changed[/yellow], edges [green]+{s['edges_added']}[/green] "
              f"[red]-{s['edges_removed']}[/red]"
              + (f", {s['renamed']} renamed" if s["renamed"] else ""))
    if report.renamed:  # listed, not only counted: a rename alone is no change, but users look for the name
        shown = ", ".join(f"{a} → {b}" for a, b in report.renamed[:RENAMES_SHOWN])
        more = f", … {len(report.renamed) - RENAMES_SHOWN} more (--json)" if len(report.renamed) > RENAMES_SHOWN else ""
        out.print(f"[dim]renamed ({len(report.renamed)}): {escape(shown)}{more}[/dim]")
    if report.empty:
        out.print("no structural differences")
        return
    bookkeeping = sum(1 for c in report.changed if set(c.changes) == {"attrs"} and set(c.changes["attrs"]) <= set(
        GE_NAME_ATTRS))
    if bookkeeping:
        out.print(f"[dim]{bookkeeping} of the {len(report.changed)} changed ops differ only in TorchAir's names of "
                  f"their inputs and outputs ({', '.join(GE_NAME_ATTRS)}): bookkeeping[/dim]")
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


def render_runs(runs: Any) -> None:
    """Two runs stage by stage: per graph, the stages only one run has, then each stage that differs."""
    from airctl.cli.output import escape, out

    def side(run: dict[str, Any]) -> str:
        passes = f"passes {run['passes']}" if run.get("passes") else "no passes"
        return f"[bold]{escape(run['run_id'] or run['run'])}[/bold] ({escape(passes)})"

    s = runs.summary()
    out.print(f"{side(runs.a)} → {side(runs.b)}: {s['stages']} stages, [yellow]{s['differ']} differ[/yellow], "
              f"{s['same']} same" + (f", {s['only_a']} only in A" if s["only_a"] else "")
              + (f", {s['only_b']} only in B" if s["only_b"] else ""))
    for graph in runs.graphs:
        if graph.status != "both":
            out.print(f"graph {escape(graph.id)}: only in {'A' if graph.status == 'only_a' else 'B'}")
            continue
        for status, label in (("only_a", "only in A"), ("only_b", "only in B")):
            names = [stage.name for stage in graph.stages if stage.status == status]
            if names:
                out.print(f"graph {escape(graph.id)}: {label}: {escape(', '.join(names))}")
        for names, report in _runs_of_same_diff(graph.stages):
            where = names[0] if len(names) == 1 else (f"{names[0]} … {names[-1]} ({len(names)} stages, the same diff; "
                                                      f"the node counts are {names[0]}'s)")
            out.print(f"\n[bold]== {escape(graph.id)} / {escape(where)} ==[/bold]")
            render(report)
    if not s["differ"]:
        out.print("no stage differs")


def _runs_of_same_diff(stages: list[Any]) -> list[tuple[list[str], Any]]:
    """Consecutive differing stages with the same diff (a pass that changed nothing passes the
    difference on), as (stage names, the first one's report)."""
    out: list[tuple[list[str], Any]] = []
    last = None
    for stage in stages:
        if stage.status != "differs":
            last = None
            continue
        data = stage.report.to_json()
        key = {k: v for k, v in data.items() if k not in ("a", "b", "matched_by")}
        if last is not None and key == last:
            out[-1][0].append(stage.name)
        else:
            out.append(([stage.name], stage.report))
            last = key
    return out

"""``airctl profile``: time a model per stream (or read a torch_npu profiler folder) and summarise it.

Two forms share one command, so that ``--help`` shows every option once, grouped:

    airctl profile MODEL.py [--passes FILE.yaml] [--mode M] [--steps N] [--warmup N] [--compare] [--json]
    airctl profile analyze DIR [--ledger RUN] [--json]

Thin (style.md §8): this module parses options, calls one flow of :mod:`airctl.pipeline.profile`
(which runs, summarises and writes the files) and renders the :class:`ProfileOutcome` it returns.
Races raise :class:`~airctl.errors.FindingsExit` (exit 1, as ``airctl check``); errors are
AirctlErrors that main.py shows. No torch at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.options import backend_option, command_line, config_option, mode_option, out_option, run_option
from airctl.cli.output import escape
from airctl.errors import AirctlError
from airctl.io.paths import shareable
from airctl.modes import Backend, Bad, Mode

HELP = (
    "Profile a model per stream: a Chrome trace with one lane per stream and record→wait arrows (open it in "
    "https://ui.perfetto.dev), busy/idle time per stream, overlap between streams, the critical path through "
    "sync edges, top ops, races, and a timeline picture; all kept in the ledger (profile/).\n\n"
    "Or read what torch_npu.profiler wrote: [bold]airctl profile analyze DIR[/bold] (docs/profile.md).\n\n"
    "With no MODEL.py: the current run's model, pass file and mode (the last `airctl compile`/`passes apply`).\n\n"
    "[bold]Examples[/bold]\n\n"
    "  airctl profile\n\n"
    "  airctl profile fixtures/models/seed.py --passes passes/stream.yaml\n\n"
    "  airctl profile fixtures/models/transformer.py --passes passes/transformer_two_streams.yaml --compare\n\n"
    "  airctl profile analyze ./prof --ledger airctl-runs/<run>\n\n"
    "  airctl profile airctl-runs/<imported run>    (GE dumps from an NPU, run per stream under sim)\n\n"
    "  airctl profile fixtures/models/ddp_overlap.py --nproc 2 --passes passes/comm_stream.yaml\n\n"
    "Exit code 1 when a race was found, 0 otherwise; 2 for bad input, 3 when the compile fails "
    "(a deadlocking plan included) or results differ from eager."
)
RUN = "Profile a model"
ANALYZE = "analyze DIR"
OUTPUT = "Output"
PATH_ROWS = 12


def register(app: typer.Typer) -> None:
    @app.command("profile", help=HELP)
    def profile(
        ctx: typer.Context,
        target: str = typer.Argument(None, metavar="[MODEL.py|analyze]", show_default=False,
                                     help="A model script (default: the current run's), or the word `analyze` "
                                          "followed by a profiler folder."),
        folder: Path = typer.Argument(None, metavar="DIR", show_default=False,
                                      help="With `analyze`: a torch_npu profiler folder (*_ascend_pt, or its parent)."),
        passes: Path = typer.Option(None, "--passes", "-p", show_default=False, rich_help_panel=RUN,
                                    help="YAML pass file applied before the run (docs/passes.md)."),
        mode: Mode = mode_option(None, rich_help_panel=RUN, show_default=False,
                                 help="TorchAir mode (default: the current run's when no MODEL.py is given, else "
                                      "max-autotune)."),
        run: str = run_option("Profile this run's model (and pass file, mode) instead of the current run's.",
                              rich_help_panel=RUN),
        steps: int = typer.Option(5, "--steps", min=1, rich_help_panel=RUN, help="Profiled steps."),
        warmup: int = typer.Option(1, "--warmup", min=0, rich_help_panel=RUN, help="Unprofiled steps first."),
        compare: bool = typer.Option(False, "--compare", rich_help_panel=RUN,
                                     help="Also run without --passes and show both side by side."),
        fail_on: Bad = typer.Option(None, "--fail-on", show_default=False, rich_help_panel=RUN,
                                    help="Also exit 1 for this (as compile and passes apply): check (an error "
                                         "finding), race (always: a race exits 1 anyway)."),
        repeats: int = typer.Option(4, "--repeats", min=1, rich_help_panel=RUN,
                                    help="With --compare: rounds per side, alternating; a difference is stated "
                                         "only when it exceeds the spread between rounds (3 or more)."),
        backend: Backend = backend_option(rich_help_panel=RUN),
        entry: str = typer.Option(None, "--entry", show_default=False, rich_help_panel=RUN,
                                  help="Function returning (model, inputs)."),
        nproc: int = typer.Option(1, "--nproc", min=1, rich_help_panel=RUN,
                                  help="Ranks (processes under torchrun): per-rank communication/compute overlap, one "
                                       "trace with a process per rank (docs/multi-rank.md)."),
        option: list[str] = config_option(rich_help_panel=RUN),
        ledger: Path = typer.Option(None, "--ledger", show_default=False, rich_help_panel=ANALYZE,
                                    help="Ledger of the same model: link tasks to graph nodes; files go to its "
                                         "profile/."),
        out: Path = out_option("Folder for ledgers (analyze without --ledger: <out>/analyze-<folder>/).",
                               rich_help_panel=OUTPUT),
        png: bool = typer.Option(False, "--png", rich_help_panel=OUTPUT,
                                 help="Also write timeline.png (headless Chromium)."),
        top: int = typer.Option(10, "--top", min=1, rich_help_panel=OUTPUT, help="Rows of top ops."),
        as_json: bool = typer.Option(False, "--json", rich_help_panel=OUTPUT, help="Print only JSON on stdout."),
    ) -> None:
        from airctl.cli.output import err, print_json, status, stdout_to_stderr
        from airctl.errors import FindingsExit
        from airctl.pipeline import profile as pipeline
        from airctl.pipeline.compile.npugraph_ex import parse_options

        if target == "analyze":
            if folder is None:
                raise AirctlError("`airctl profile analyze` needs a profiler folder",
                                  hint="airctl profile analyze ./prof   (the dir given to tensorboard_trace_handler)")
            with status("reading the profile…") as spinner:  # big traces: how far it got
                outcome = pipeline.analyze_profile_folder(folder, ledger, out=out, png=png, top=top,
                                                          progress=lambda msg: spinner.update(escape(msg)))
        elif (imported := _imported(target, run, out, passes, compare, nproc)) is not None:
            from airctl.pipeline.profile_imported import profile_imported

            with stdout_to_stderr(as_json), status("profiling the imported GE graphs…") as spinner:
                outcome = profile_imported(imported, steps=steps, warmup=warmup, png=png, top=top,
                                           backend=backend.value, progress=lambda msg: spinner.update(msg))
        else:
            from airctl.pipeline.run.current import choose_model

            chosen = choose_model(Path(target) if target else None, entry=entry, mode=mode.value if mode else None,
                                  passes=passes, out_dir=out, run=run, reuse_passes=True)
            if chosen.origin is not None:
                with_passes = f" with {chosen.passes.name}" if chosen.passes else ""
                err.print(f"profiling {escape(chosen.model.name)}{escape(with_passes)} "
                          f"({escape(chosen.mode)}, from run {escape(chosen.origin.run.name)})", highlight=False)
                for warning in chosen.origin.warnings:
                    err.print(f"[bold yellow]warning:[/bold yellow] {escape(warning)}")
            _check_model_form(folder, ledger, compare, chosen.passes)
            req = pipeline.ProfileRequest(model_path=chosen.model, mode=chosen.mode, passes_file=chosen.passes,
                                          steps=steps, warmup=warmup, out_dir=out, backend=backend.value,
                                          entry=chosen.entry, command_line=command_line(ctx),
                                          options=parse_options(option))
            if nproc > 1:
                from airctl.cli.ranks import profile_ranks_command

                profile_ranks_command(req, nproc, compare=compare, as_json=as_json)
                return
            with stdout_to_stderr(as_json), status("profiling…") as spinner:
                if compare:
                    outcome = pipeline.compare_profiles(req, png=png, top=top, repeats=repeats,
                                                        progress=lambda msg: spinner.update(msg))
                else:
                    outcome = pipeline.profile_and_summarize(req, png=png, top=top,
                                                             progress=lambda msg: spinner.update(msg))
        for warning in outcome.warnings:
            err.print(f"[bold yellow]warning:[/bold yellow] {escape(str(warning))}")
        if as_json and outcome.to_json() is not None:
            print_json(outcome.to_json())
        elif outcome.comparison is not None:
            render_comparison(outcome.comparison)
        elif outcome.ranks is not None:
            render_ranks(outcome.ranks, top)
        elif outcome.summary is not None:
            render_summary(outcome.summary, top)
        if outcome.error is not None:
            raise outcome.error
        if fail_on is not None and outcome.runs:
            _fail_on(fail_on, outcome.runs)
        if outcome.races:
            raise FindingsExit(len(outcome.races))


def _imported(target: str | None, run: str | None, out: Path, passes: Path | None, compare: bool,
              nproc: int) -> Path | None:
    """The imported ledger to profile (a ledger folder given, or the current/--run run an import), else None."""
    from airctl.pipeline.profile_imported import imported_ledger

    if target is not None and target.endswith(".py"):
        return None
    found = imported_ledger(target, run, out)
    if found is not None and (passes is not None or compare or nproc > 1):
        raise AirctlError("--passes, --compare and --nproc need a model script; an imported ledger has GE graphs only",
                          hint="profile the imported ledger as it is, or the model script with airctl profile MODEL.py")
    return found


def _check_model_form(folder: Path | None, ledger: Path | None, compare: bool, passes: Path | None) -> None:
    """Options that belong to `analyze`, or that need another, given with a model script."""
    if folder is not None:
        raise AirctlError(f"unexpected argument {str(folder)!r} after the model script",
                          hint="to read a profiler folder: airctl profile analyze DIR")
    if ledger is not None:
        raise AirctlError("--ledger goes with `airctl profile analyze DIR`",
                          hint="a model run writes its own ledger under --out")
    if compare and passes is None:
        raise AirctlError("--compare needs --passes FILE.yaml (it runs the model without and with it)")


# -- rendering --------------------------------------------------------------------------------------
def _t(seconds: float | None) -> str:
    from airctl.profile.timeline_svg import format_time

    return "-" if seconds is None else format_time(seconds)


def render_summary(summary: Any, top: int = 10) -> None:
    from rich.table import Table

    from airctl.cli.output import err, escape, out

    for note in summary.meta.get("notes") or []:
        err.print(f"[dim]note: {escape(note)}[/dim]")
    table = Table(title="streams (median step)", title_justify="left")
    for col in ("stream", "busy", "idle", "busy %", "ops", "longest gap"):
        table.add_column(col, justify="left" if col == "stream" else "right")
    for s in summary.streams:
        comm = " [dim](communication)[/dim]" if s.comm_ops and s.comm_ops == s.ops else ""
        table.add_row(escape(s.stream) + comm, _t(s.busy_s), _t(s.idle_s), f"{s.busy_pct:.1f}", str(s.ops),
                      _t(s.largest_gap_s))
    out.print(table)
    share = f" ({100 * summary.overlap_s / summary.span_s:.1f}% of the span)" if summary.span_s else ""
    out.print(f"overlap: [bold]{_t(summary.overlap_s)}[/bold]{share}   op span: {_t(summary.span_s)}"
              f"   step time (median of {len(summary.step_seconds)}): {_t(summary.step_s)}")
    path = summary.critical_path
    model_dir = str(Path(summary.meta["model"]).resolve().parent) if summary.meta.get("model") else None
    steps = ", ".join(f"{g.graph} step {g.step}" for g in summary.graphs if g.step is not None)
    out.print(f"\n[bold]critical path[/bold] ({escape(steps)}, the median step): {_t(summary.critical_path_s)} "
              f"of work in {len(path)} ops")
    for p in path[:PATH_ROWS]:
        via = f"[red]{escape(p.via)}[/red]" if p.via.startswith("sync") else f"[dim]{escape(p.via)}[/dim]"
        took = _t(p.dur_s) if p.work_s or not p.dur_s else f"[dim]{_t(p.dur_s)} sync[/dim]"  # a wait's is blocking
        out.print(f"  {escape(p.node)}  [dim]{escape(p.op)}[/dim]  stream {escape(p.stream)}  {took}  "
                  f"{via}  {escape(shareable(p.source or '', model_dir=model_dir))}")
    if len(path) > PATH_ROWS:
        out.print(f"  … {len(path) - PATH_ROWS} more (summary.json)")
    if summary.top_ops:
        ops = Table(title=f"top ops (per step, top {top})", title_justify="left")
        for col in ("op", "calls", "total", "mean", "share"):
            ops.add_column(col, justify="left" if col == "op" else "right")
        for o in summary.top_ops:
            ops.add_row(escape(o.op), str(o.count), _t(o.total_s), _t(o.mean_s), f"{100 * o.share:.1f}%")
        out.print(ops)
    if summary.npu:
        render_npu_steps(summary.npu)
    _render_races(summary.races, model_dir)
    _render_findings(summary.meta.get("ledger"))
    meta = summary.meta
    if meta.get("matches_eager") is not None:
        verdict = "[green]matches eager[/green]" if meta["matches_eager"] else "[red]differs from eager[/red]"
        out.print(f"execution: {verdict} (max abs error {meta.get('max_abs_error') or 0:.3g})")
    if meta.get("links"):
        links = meta["links"]
        out.print(f"linked to graph nodes: {links['linked']} task(s), {links['unlinked']} not linked")
    if meta.get("simulated"):
        out.print("[dim]sim: CPU timings (streams are threads), not NPU kernels[/dim]")
    if summary.trace:
        out.print(f"trace: {escape(summary.trace)}  (open in https://ui.perfetto.dev)")
    if meta.get("svg"):
        out.print(f"picture: {escape(meta['png'] if meta.get('png') else meta['svg'])}")
    if meta.get("ledger"):
        out.print(f"ledger: {escape(str(meta['ledger']))}")


def _fail_on(fail_on: Any, runs: list[Any]) -> None:
    """``--fail-on`` judged on the profiled run with the passes (the last one that has them)."""
    from types import SimpleNamespace

    from airctl.cli.verdicts import enforce_fail_on
    from airctl.ledger.reader import Ledger

    ledgers = [Ledger.open(Path(r.ledger_dir)) for r in runs if (Path(r.ledger_dir) / "index.json").is_file()]
    chosen = next((lg for lg in reversed(ledgers) if lg.index.passes), ledgers[-1] if ledgers else None)
    if chosen is not None:
        enforce_fail_on(fail_on, SimpleNamespace(index=chosen.index, ledger_dir=chosen.root))


def _render_findings(ledger: str | None) -> None:
    """The verifier's findings of the profiled run, as compile and passes apply print them."""
    if not ledger or not (Path(ledger) / "index.json").is_file():
        return
    from airctl.cli.verdicts import print_findings
    from airctl.ledger.reader import Ledger

    index = Ledger.open(Path(ledger)).index.to_json()
    model = (index.get("model") or {}).get("path")
    print_findings(index.get("findings") or [], model_dir=str(Path(model).resolve().parent) if model else None)


def _render_races(races: list, model_dir: str | None = None) -> None:
    from airctl.cli.output import escape, out

    if not races:
        out.print("races: none")
        return
    out.print(f"[bold red]{len(races)} race(s)[/bold red]")
    for r in races:
        out.print(f"  [red]{escape(r.reader)}[/red] (stream {escape(r.reader_stream)}, "
                  f"{escape(shareable(r.reader_source or '?', model_dir=model_dir))}) reads "
                  f"[red]{escape(r.producer)}[/red] (stream {escape(r.producer_stream)}, "
                  f"{escape(shareable(r.producer_source or '?', model_dir=model_dir))}) with no ordering")
        if r.message:
            out.print(f"    [dim]{escape(shareable(r.message, model_dir=model_dir))}[/dim]")


def render_comparison(c: Any) -> None:
    from rich.table import Table

    from airctl.cli.output import escape, out

    a, b = c.without, c.with_passes
    table = Table(title=f"without vs with {escape(Path(c.passes_file).name if c.passes_file else 'passes')} "
                        "(each side's median round; the verdict below weighs every round)", title_justify="left")
    for col in ("", "without", "with", "change"):
        table.add_column(col, justify="left" if not col else "right")

    def row(label: str, x: float | None, y: float | None) -> None:
        change = "-" if x is None or y is None else (f"{y / x:.2f}×" if x else f"+{_t(y)}")
        table.add_row(label, _t(x), _t(y), change)

    row("step time (median)", a.step_s, b.step_s)
    row("op span", a.span_s, b.span_s)
    row("overlap", a.overlap_s, b.overlap_s)
    row("critical path", a.critical_path_s, b.critical_path_s)
    for s in c.stream_rows():
        row(f"busy: stream {escape(s['stream'])}", s["busy_without_s"], s["busy_with_s"])
    out.print(table)
    verdict = c.verdict  # over every round: a difference only when it exceeds the noise (profile/noise.py)
    rounds = c.to_json()["rounds"]
    out.print(f"step time per round: without {escape(', '.join(_t(x) for x in rounds['without']))}; "
              f"with {escape(', '.join(_t(x) for x in rounds['with']))}")
    style = "bold" if verdict.measurable else "bold dim"
    out.print(f"verdict: [{style}]{escape(verdict.text)}[/{style}]")
    gained = c.overlap_gained_s
    out.print(f"[dim]overlap gained in the median rounds: {'+' if gained >= 0 else '-'}{_t(abs(gained))}[/dim]")
    model = b.meta.get("model")
    _render_races(b.races, str(Path(model).resolve().parent) if model else None)
    for label, s in (("without", a), ("with", b)):
        if s.trace:
            out.print(f"trace ({label}): {escape(s.trace)}")
    if a.meta.get("simulated") or b.meta.get("simulated"):
        out.print("[dim]sim: CPU timings (streams are threads), not NPU kernels[/dim]")


# -- profile analyze: the profiler's step breakdown, several ranks ----------------------------------
def _us(value: float | None) -> str:
    return "-" if value is None else _t(value / 1e6)


def render_npu_steps(npu: dict) -> None:
    """Per step: computing, communication, overlapped (hidden under compute), free; and how far they
    are from the profiler's own step_trace_time.csv."""
    from rich.table import Table

    from airctl.cli.output import escape, out

    check = npu.get("check") or {}
    theirs = {row["step"]: row for row in check.get("steps", [])}
    table = Table(title="steps (as step_trace_time.csv defines them)", title_justify="left")
    # computing, communication, overlapped (hidden under compute), not overlapped, free: docs/profile.md
    for col in ("step", "compute", "comm", "overlapped", "comm only", "free", "vs profiler"):
        table.add_column(col, justify="right")
    for s in npu.get("steps", []):
        diffs = [v["diff_pct"] for v in theirs.get(s["step"], {}).values() if isinstance(v, dict)]
        worst = None if not diffs or None in diffs else max(diffs)
        versus = "-" if not diffs else "differs" if worst is None else "< 0.01%" if worst < 0.01 else f"{worst:.2g}%"
        table.add_row(str(s["step"]), _us(s["computing_us"]), _us(s["communication_us"]), _us(s["overlapped_us"]),
                      _us(s["communication_not_overlapped_us"]), _us(s["free_us"]), versus)
    out.print(table)
    streams = npu.get("streams_from") or {}
    out.print(f"[dim]tasks from {escape(str(npu.get('tasks_from')))}; streams: "
              f"{escape('; '.join(f'{k}: {v}' for k, v in streams.items()))}"
              + (f"; checked against {escape(str(check.get('against')))}" if check else "") + "[/dim]")


def render_ranks(multi: Any, top: int = 10) -> None:
    """A folder of several ranks: each rank's summary, then the slowest rank per step and the skew."""
    from rich.table import Table

    from airctl.cli.output import err, escape, out

    for note in multi.meta.get("notes") or []:
        err.print(f"[dim]note: {escape(note)}[/dim]")
    for r in multi.ranks:
        out.rule(f"rank {r.rank}  {escape(str(r.summary.meta.get('folder', '')))}")
        render_summary(r.summary, top)
    cross = multi.cross_rank
    out.rule("across ranks")
    table = Table(title="per step", title_justify="left")
    for col in ("step", "slowest rank", "spread", "collectives", "wait skew", "max skew", "waited for"):
        table.add_column(col, justify="right")
    for s in cross.get("steps", []):
        late = "-" if s.get("late_rank") is None else f"rank {s['late_rank']}"
        table.add_row(str(s["step"]), str(s["slowest_rank"]), _us(s["spread_us"]), str(s["collectives"]),
                      _us(s["wait_skew_us"]), _us(s["max_wait_skew_us"]), late)
    out.print(table)
    out.print(f"slowest rank: [bold]{cross.get('slowest_rank')}[/bold]   last to arrive at collectives: "
              f"[bold]{cross.get('late_rank')}[/bold]   [dim]{escape(str(cross.get('clock', '')))}[/dim]")
    if multi.trace:
        out.print(f"trace: {escape(multi.trace)}  (a process per rank; open in https://ui.perfetto.dev)")

"""``airctl profile``: time a model per stream (or read a torch_npu profiler folder) and summarise it.

Two forms share one command, so that ``--help`` shows every option once, grouped:

    airctl profile MODEL.py [--passes FILE.yaml] [--mode M] [--steps N] [--warmup N] [--compare] [--json]
    airctl profile analyze DIR [--run RUN] [--json]

Thin (style.md §8): this module parses options, calls one flow of :mod:`airctl.pipeline.profile`
(which runs, summarises and writes the files) and renders the :class:`ProfileOutcome` it returns.
Races raise :class:`~airctl.errors.FindingsExit` (exit 1, as ``airctl check``); errors are
AirctlErrors that main.py shows. No torch at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from airctl.cli.options import (
    TIMES_SOURCES_HELP,
    command_line,
    config_option,
    entry_option,
    mode_option,
    out_option,
    run_option,
)
from airctl.cli.output import err, escape
from airctl.cli.shown import Shown, reports
from airctl.cli.target import EVERY_MODE, EveryMode, build_target, every_mode_options
from airctl.devices import device_help
from airctl.errors import AirctlError
from airctl.ledger_files import is_ledger
from airctl.modes import Bad, Mode

if TYPE_CHECKING:
    from airctl.pipeline.source import Source

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
    "  airctl profile analyze ./prof --run airctl-runs/<run>\n\n"
    "  airctl profile airctl-runs/<imported run>    (GE dumps from an NPU, run per stream under sim)\n\n"
    "  airctl profile fixtures/models/ddp_overlap.py --nproc 2 --passes passes/comm_stream.yaml\n\n"
    "  airctl profile --times estimate --device 910B3     (the current run's plan, predicted on an NPU)\n\n"
    "  airctl profile --times kernels.csv --compare       (the plan vs one stream, predicted)\n\n"
    "Exit code 1 when a race was found, 0 otherwise; 2 for bad input, 3 when the compile fails "
    "(a deadlocking plan included) or results differ from eager."
)
RUN = "Profile a model"
PREDICT = "Predict on the NPU (--times)"
ANALYZE = "analyze DIR"
OUTPUT = "Output"


def register(app: typer.Typer) -> None:
    @app.command("profile", help=HELP)
    @every_mode_options(panel=RUN)
    @reports("Print only JSON on stdout.", panel=OUTPUT)
    def profile(
        ctx: typer.Context,
        source: str = typer.Argument(None, metavar="[MODEL.py|analyze]", show_default=False,
                                     help="A model script (default: the current run's), or the word `analyze` "
                                          "followed by a profiler folder."),
        folder: Path = typer.Argument(None, metavar="DIR", show_default=False,
                                      help="With `analyze`: a torch_npu profiler folder (*_ascend_pt, or its parent)."),
        passes: Path = typer.Option(None, "--passes", "-p", show_default=False, rich_help_panel=RUN,
                                    help="YAML pass file applied before the run (docs/passes.md)."),
        mode: Mode = mode_option(None, rich_help_panel=RUN, show_default=False,
                                 help="TorchAir mode (default: the current run's when no MODEL.py is given, else "
                                      "max-autotune)."),
        run: str = run_option("Profile this run's model (and pass file, mode) instead of the current run's; with "
                              "`analyze`: the run of the same model, whose graph nodes the tasks link to (its "
                              "profile/ gets the files).", rich_help_panel=RUN),
        steps: int = typer.Option(5, "--steps", min=1, rich_help_panel=RUN, help="Profiled steps."),
        warmup: int = typer.Option(1, "--warmup", min=0, rich_help_panel=RUN, help="Unprofiled steps first."),
        compare: bool = typer.Option(False, "--compare", rich_help_panel=RUN,
                                     help="Also run without --passes and show both side by side."),
        fail_on: Bad = typer.Option(None, "--fail-on", show_default=False, rich_help_panel=RUN,
                                    help="Also exit 1 for this (as compile and passes apply): check (an error "
                                         "finding), race (always: a race exits 1 anyway)."),
        repeats: int = typer.Option(4, "--repeats", min=1, rich_help_panel=RUN,
                                    help="With --compare: rounds per side (one compile each); a difference is stated "
                                         "only when it exceeds the spread between rounds (3 or more)."),
        every: EveryMode = EVERY_MODE,
        entry: str = entry_option(rich_help_panel=RUN),
        nproc: int = typer.Option(1, "--nproc", min=1, rich_help_panel=RUN,
                                  help="Ranks (processes under torchrun): per-rank communication/compute overlap, one "
                                       "trace with a process per rank (docs/multi-rank.md)."),
        option: list[str] = config_option(rich_help_panel=RUN),
        times: str = typer.Option(None, "--times", show_default=False, rich_help_panel=PREDICT,
                                  help="Predict the NPU step instead of timing CPU threads: replay the run's plan with "
                                       "device times from " + TIMES_SOURCES_HELP + ". SOURCE: the "
                                       "current run, a run id/ledger, a MODEL.py (compiled first) or a profiler "
                                       "folder (its own measured plan)."),
        device: str = typer.Option(None, "--device", show_default=False, rich_help_panel=PREDICT,
                                   help="With --times: " + device_help() + ". Cube and vector cores and HBM "
                                        "bandwidth are shared between concurrent kernels, and the estimate's peaks."),
        launch_us: float = typer.Option(None, "--launch-us", min=0.0, show_default=False, rich_help_panel=PREDICT,
                                        help="With --times: host cost of one graph execution, µs (default: 40 "
                                             "max-autotune, 15 aclgraph; an assumption, docs/profile.md)."),
        ledger: Path = typer.Option(None, "--ledger", show_default=False, rich_help_panel=ANALYZE,
                                    help="Deprecated: --run, which every command takes, names the run."),
        out: Path = out_option("Folder for ledgers (analyze without --run: <out>/analyze-<folder>/).",
                               rich_help_panel=OUTPUT),
        png: bool = typer.Option(False, "--png", rich_help_panel=OUTPUT,
                                 help="Also write timeline.png (headless Chromium)."),
        top: int = typer.Option(10, "--top", min=1, rich_help_panel=OUTPUT, help="Rows of top ops."),
    ) -> Shown:
        if times is not None:
            if source == "analyze" or folder is not None or nproc > 1:
                raise AirctlError("--times predicts one run's plan: it takes one SOURCE and no --nproc",
                                  hint="airctl profile [RUN|MODEL.py|PROFILER-DIR] --times T.csv")
            from airctl.cli.predict import predict_command
            from airctl.pipeline.compile.options import parse_options
            from airctl.pipeline.source import PREDICTABLE, Form, resolve_source

            parse_options(option)  # a bad --option is refused whatever SOURCE is
            resolved = resolve_source(source, run, out_dir=out, accepts=PREDICTABLE)
            model = build_target(resolved.path, every, mode=mode, entry=entry, passes=passes, option=option) \
                if resolved.form is Form.MODEL else None  # compiled first
            return predict_command(source=resolved, model=model, times=times, out=out, passes=passes,
                                   command_line=command_line(ctx), device=device, launch_us=launch_us,
                                   compare=compare, top=top, png=png, fail_on=fail_on)
        from airctl.pipeline.source import MODELS, resolve_source

        if source != "analyze":
            _check_model_args(folder, ledger)  # usage first: then what SOURCE names
        resolved = None if source == "analyze" else resolve_source(source, run, out_dir=out, accepts=MODELS)
        if resolved is None:
            outcome = _analyze(folder, _analyzed_run(run, ledger), out, png, top)
        elif (imported := _imported(resolved, passes, compare, nproc)) is not None:
            outcome = _profile_imported(imported, steps, warmup, png, top, str(every.backend))
        else:
            req = _model_request(ctx, resolved, every, mode=mode, entry=entry, passes=passes, out=out,
                                 option=option, steps=steps, warmup=warmup)
            if compare and req.target.passes_file is None:
                raise AirctlError("--compare needs --passes FILE.yaml (it runs the model without and with it)")
            if nproc > 1:
                from airctl.cli.ranks import profile_ranks_command

                return profile_ranks_command(req, nproc, compare=compare)
            outcome = _profile_model(req, compare=compare, png=png, top=top, repeats=repeats)
        for warning in outcome.warnings:
            err.print(f"[bold yellow]warning:[/bold yellow] {escape(str(warning))}")
        return Shown(outcome, lambda: _render(outcome, top), lambda: _verdict(outcome, fail_on))


def _analyzed_run(run: str | None, ledger: Path | None) -> str | None:
    """The run ``analyze`` links to: ``--run``, or ``--ledger`` (its old name, said to be deprecated)."""
    if ledger is None:
        return run

    if run is not None:
        raise AirctlError("--ledger is the old name of --run: give one of them",
                          hint="airctl profile analyze DIR --run RUN")
    err.print("[bold yellow]warning:[/bold yellow] --ledger is deprecated: `--run RUN` names the run, as in every "
              "command")
    return str(ledger)


def _analyze(folder: Path | None, ledger: str | None, out: Path, png: bool, top: int) -> Any:
    """``airctl profile analyze DIR``: what torch_npu's profiler wrote, summarised."""
    from airctl.cli.output import status
    from airctl.pipeline.profile import analyze_profile_folder
    from airctl.pipeline.source import resolve_source

    if folder is None:
        raise AirctlError("`airctl profile analyze` needs a profiler folder",
                          hint="airctl profile analyze ./prof   (the dir given to tensorboard_trace_handler)")
    linked = resolve_source(ledger, out_dir=out).path if ledger is not None else None  # any form: `--run latest`
    with status("reading the profile…") as spinner:  # big traces: how far it got
        return analyze_profile_folder(folder, linked, out=out, png=png, top=top,
                                      progress=lambda msg: spinner.update(escape(msg)))


def _profile_imported(imported: Path, steps: int, warmup: int, png: bool, top: int, backend: str) -> Any:
    """An imported ledger's GE graphs, run per stream under sim."""
    from airctl.cli.output import status
    from airctl.pipeline.profile_imported import profile_imported

    with status("profiling the imported GE graphs…") as spinner:
        return profile_imported(imported, steps=steps, warmup=warmup, png=png, top=top, backend=backend,
                                progress=lambda msg: spinner.update(msg))


def _model_request(ctx: typer.Context, source: Source, every: EveryMode, *, mode: Mode | None,
                   entry: str | None, passes: Path | None, out: Path, option: list[str] | None,
                   steps: int, warmup: int) -> Any:
    """The ProfileRequest of MODEL.py, or of the current (``--run``) run's model, pass file and mode
    (said on stderr, with any warning)."""
    from airctl.pipeline.profile import ProfileRequest
    from airctl.pipeline.source import choose_model

    chosen = choose_model(source, entry=entry, mode=mode, passes=passes, reuse_passes=True)
    if chosen.origin is not None:
        with_passes = f" with {chosen.passes.name}" if chosen.passes else ""
        err.print(f"profiling {escape(chosen.model.name)}{escape(with_passes)} "
                  f"({escape(chosen.mode)}, from run {escape(chosen.origin.run.name)})", highlight=False)
        for warning in chosen.origin.warnings:
            err.print(f"[bold yellow]warning:[/bold yellow] {escape(warning)}")
    target = build_target(chosen.model, every, mode=chosen.mode, entry=chosen.entry, passes=chosen.passes,
                          option=option)  # a bad --option: refused here
    return ProfileRequest(target, steps=steps, warmup=warmup, out_dir=out, command_line=command_line(ctx))


def _profile_model(req: Any, *, compare: bool, png: bool, top: int, repeats: int) -> Any:
    from airctl.cli.output import status
    from airctl.pipeline import profile as pipeline

    with status("profiling…") as spinner:
        if compare:
            return pipeline.compare_profiles(req, png=png, top=top, repeats=repeats,
                                             progress=lambda msg: spinner.update(msg))
        return pipeline.profile_and_summarize(req, png=png, top=top, progress=lambda msg: spinner.update(msg))


def _render(outcome: Any, top: int) -> None:
    """The comparison, ranks or summary."""
    from airctl.cli.profile_render import render_comparison, render_ranks, render_summary

    if outcome.comparison is not None:
        render_comparison(outcome.comparison)
    elif outcome.ranks is not None:
        render_ranks(outcome.ranks, top)
    elif outcome.summary is not None:
        render_summary(outcome.summary, top)


def _verdict(outcome: Any, fail_on: Bad | None) -> None:
    """The exit once shown: the error, --fail-on, races (1)."""
    from airctl.errors import FindingsExit

    if outcome.error is not None:
        raise outcome.error
    if fail_on is not None and outcome.runs:
        _fail_on(fail_on, outcome.runs)
    if outcome.races:
        raise FindingsExit(len(outcome.races))


def _imported(source: Source, passes: Path | None, compare: bool, nproc: int) -> Path | None:
    """The imported ledger to profile (SOURCE a run that is an import), else None."""
    from airctl.pipeline.profile_imported import imported_ledger
    from airctl.pipeline.source import Form

    if source.form is not Form.RUN:
        return None
    found = imported_ledger(source.path)
    if found is not None and (passes is not None or compare or nproc > 1):
        raise AirctlError("--passes, --compare and --nproc need a model script; an imported ledger has GE graphs only",
                          hint="profile the imported ledger as it is, or the model script with airctl profile MODEL.py")
    return found


def _check_model_args(folder: Path | None, ledger: Path | None) -> None:
    """Arguments that belong to `analyze`, given with a model script or a run."""
    if folder is not None:
        raise AirctlError(f"unexpected argument {str(folder)!r} after the model script or run",
                          hint="to read a profiler folder: airctl profile analyze DIR")
    if ledger is not None:
        raise AirctlError("--ledger goes with `airctl profile analyze DIR` (and is --run there now)",
                          hint="a model run writes its own ledger under --out; --run RUN profiles that run's model")


def _fail_on(fail_on: Any, runs: list[Any]) -> None:
    """``--fail-on`` judged on the profiled run with the passes (the last one that has them)."""
    from airctl.cli.verdicts import as_result, enforce_fail_on
    from airctl.ledger.reader import Ledger

    ledgers = [Ledger.open(Path(r.ledger_dir)) for r in runs if is_ledger(r.ledger_dir)]
    chosen = next((lg for lg in reversed(ledgers) if lg.index.passes), ledgers[-1] if ledgers else None)
    if chosen is not None:
        enforce_fail_on(fail_on, as_result(chosen))

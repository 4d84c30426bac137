"""``airctl profile``: time a model per stream (or read a torch_npu profiler folder) and summarise it.

Two forms share one command, so that ``--help`` shows every option once, grouped:

    airctl profile MODEL.py [--passes FILE.yaml] [--mode M] [--steps N] [--warmup N] [--compare] [--json]
    airctl profile analyze DIR [--run RUN] [--json]

Thin (style.md §8): this module parses options; :func:`airctl.pipeline.profile_flows.choose` picks
the flow they name (predict, analyze, an imported run, ranks, a model) and makes its request; this
module runs it under a spinner and renders the outcome (a :class:`ProfileOutcome`, or the predicted
or per-rank views).
Races raise :class:`~airctl.errors.FindingsExit` (exit 1, as ``airctl check``); errors are
AirctlErrors that main.py shows. No torch at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command, help_text
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
from airctl.cli.shown import Shown
from airctl.cli.target import EVERY_MODE, EveryMode
from airctl.devices import device_help
from airctl.ledger_files import is_ledger
from airctl.modes import Bad, Mode

HELP = help_text(
    "Profile a model per stream: a Chrome trace with one lane per stream and record→wait arrows (open it in "
    "https://ui.perfetto.dev), busy/idle time per stream, overlap between streams, the critical path through "
    "sync edges, top ops, races, and a timeline picture; all kept in the ledger (profile/).\n\n"
    "Or read what torch_npu.profiler wrote: [bold]airctl profile analyze DIR[/bold] (docs/profile.md).\n\n"
    "With no MODEL.py: the current run's model, pass file and mode (the last `airctl compile`/`passes apply`), "
    "on as many ranks as it ran.",
    "airctl profile",
    "airctl profile fixtures/models/seed.py --passes passes/stream.yaml",
    "airctl profile fixtures/models/transformer.py --passes passes/transformer_two_streams.yaml --compare",
    "airctl profile analyze ./prof --run airctl-runs/<run>",
    "airctl profile airctl-runs/<imported run>    (GE dumps from an NPU, run per stream under sim)",
    "airctl profile fixtures/models/ddp_overlap.py --nproc 2 --passes passes/comm_stream.yaml",
    "airctl profile --times estimate --device 910B3     (the current run's plan, predicted on an NPU)",
    "airctl profile --times kernels.csv --compare       (the plan vs one stream, predicted)",
    then="Exit code 1 when a race was found, 0 otherwise; 2 for bad input, 3 when the compile fails (a deadlocking "
         "plan included) or results differ from eager.",
)
RUN = "Profile a model"
PREDICT = "Predict on the NPU (--times)"
ANALYZE = "analyze DIR"
OUTPUT = "Output"


def register(app: typer.Typer) -> None:
    @command(app, "profile", help=HELP, modes_panel=RUN, json="Print only JSON on stdout.", json_panel=OUTPUT)
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
        from airctl.pipeline import profile_flows as flows

        flow = flows.choose(flows.ProfileArgs(
            source=source, folder=folder, run=run, ledger=ledger, passes=passes, mode=mode, entry=entry, every=every,
            option=option, steps=steps, warmup=warmup, compare=compare, repeats=repeats, nproc=nproc, times=times,
            device=device, launch_us=launch_us, out=out, png=png, top=top, command_line=command_line(ctx)), _say)
        if isinstance(flow, flows.PredictRequest):
            from airctl.cli.predict import predict_command

            return predict_command(flow, fail_on=fail_on)
        if isinstance(flow, flows.Ranks):
            from airctl.cli.ranks import profile_ranks_command

            return profile_ranks_command(flow.request, flow.nproc, compare=flow.compare)
        outcome = _run(flow)
        for warning in outcome.warnings:
            err.print(f"[bold yellow]warning:[/bold yellow] {escape(str(warning))}")
        return Shown(outcome, lambda: _render(outcome, top), lambda: _verdict(outcome, fail_on))


def _say(text: str) -> None:
    """What the chosen flow says before it runs (stderr); ``warning: ...`` in the warnings' style."""
    head, sep, rest = text.partition(": ")
    if head == "warning" and sep:
        err.print(f"[bold yellow]warning:[/bold yellow] {escape(rest)}", highlight=False)
    else:
        err.print(escape(text), highlight=False)


def _run(flow: Any) -> Any:
    """Run an analyze, imported or model flow under the spinner: its ProfileOutcome."""
    from airctl.cli.output import status
    from airctl.pipeline import profile as pipeline
    from airctl.pipeline import profile_flows as flows

    if isinstance(flow, flows.Analyze):
        with status("reading the profile…") as spinner:  # big traces: how far it got
            return pipeline.analyze_profile_folder(flow.folder, flow.linked, out=flow.out, png=flow.png, top=flow.top,
                                                   progress=lambda msg: spinner.update(msg))
    if isinstance(flow, flows.Imported):
        from airctl.pipeline.profile_imported import profile_imported

        with status("profiling the imported GE graphs…") as spinner:
            return profile_imported(flow.ledger, steps=flow.steps, warmup=flow.warmup, png=flow.png, top=flow.top,
                                    backend=flow.backend, progress=lambda msg: spinner.update(msg))
    with status("profiling…") as spinner:
        if flow.compare:
            return pipeline.compare_profiles(flow.request, png=flow.png, top=flow.top, repeats=flow.repeats,
                                             progress=lambda msg: spinner.update(msg))
        return pipeline.profile_and_summarize(flow.request, png=flow.png, top=flow.top,
                                              progress=lambda msg: spinner.update(msg))


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


def _fail_on(fail_on: Any, runs: list[Any]) -> None:
    """``--fail-on`` judged on the profiled run with the passes (the last one that has them)."""
    from airctl.cli.verdicts import as_result, enforce_fail_on
    from airctl.ledger.reader import Ledger

    ledgers = [Ledger.open(Path(r.ledger_dir)) for r in runs if is_ledger(r.ledger_dir)]
    chosen = next((lg for lg in reversed(ledgers) if lg.index.passes), ledgers[-1] if ledgers else None)
    if chosen is not None:
        enforce_fail_on(fail_on, as_result(chosen))

"""``airctl compile``: compile a model script through TorchAir and keep a ledger of every stage."""

from __future__ import annotations

from pathlib import Path

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.options import (
    atol_option,
    capture_option,
    command_line,
    config_option,
    dump_types,
    dump_types_option,
    entry_option,
    mode_option,
    out_option,
)
from airctl.cli.shown import Shown
from airctl.cli.target import EVERY_MODE, EveryMode, build_target
from airctl.limits import COLLECTIVE_TIMEOUT_S
from airctl.modes import Bad, Capture, Mode

HELP = help_text(
    "Compile MODEL.py through TorchAir (Dynamo → AOT → TorchAir's FX passes → GE or aclgraph), run it once, "
    "compare with eager PyTorch, and leave a ledger of every stage.\n\n"
    "The script defines get_model() and get_inputs() (or module-level `model` and `inputs`, or use --entry). "
    "Each run gets its own folder under --out: index.json, one graph snapshot per stage, TorchAir's own dumps "
    "in torchair/, log.txt and report.html.",
    "airctl compile fixtures/models/seed.py --mode max-autotune",
    "airctl compile model.py --mode reduce-overhead --out runs/",
    "airctl compile model.py --mode npugraph_ex --option capture_limit=4",
    "airctl compile model.py --passes passes/stream.yaml --json",
    "airctl compile fixtures/models/ddp_overlap.py --nproc 2",
)


def register(app: typer.Typer) -> None:
    @command(app, "compile", help=HELP, no_args_is_help=True, json="Print index.json to stdout instead of the summary.")
    def compile_cmd(
        ctx: typer.Context,
        model: Path = typer.Argument(..., help="Model script (.py).", show_default=False),
        mode: Mode = mode_option(),
        out: Path = out_option("Folder for ledgers (one run per subfolder); the run becomes its current run."),
        every: EveryMode = EVERY_MODE,
        dump_type: str = dump_types_option(),
        entry: str = entry_option(),
        passes: Path = typer.Option(None, "--passes", "-p", help="YAML pass file to apply (see `airctl passes list`).",
                                    show_default=False),
        atol: float = atol_option(),
        capture: Capture = capture_option(),
        fail_on: Bad = typer.Option(None, "--fail-on", show_default=False,
                                    help="Also exit non-zero (1) for this: race (the executor saw a stream race), "
                                         "check (an error finding); numerics and compile failures exit 3 anyway."),
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Print TorchAir's warnings as they come (by "
                                     "default they are kept in index.json and counted in one line)."),
        nproc: int = typer.Option(1, "--nproc", min=1, help="Ranks: compile under torchrun, a process group per "
                                  "rank, a ledger per rank (docs/multi-rank.md)."),
        collective_timeout: float = typer.Option(COLLECTIVE_TIMEOUT_S, "--collective-timeout", min=0, help=(
            "With --nproc: the ranks' default process-group timeout under sim (s); a rank that waits longer "
            "for its peers fails.")),
        option: list[str] = config_option(),
        full: bool = typer.Option(False, "--full", help="Trace the model again even when a run of --out kept its "
                                  "pre-pass graph (incremental apply, docs/incremental.md; AIRCTL_INCREMENTAL=0)."),
    ) -> Shown:
        target = build_target(model, every, mode=mode, entry=entry, passes=passes, option=option, atol=atol,
                              capture=capture, dump_types=dump_types(dump_type), verbose=verbose)
        if nproc > 1:
            from airctl.cli.ranks import compile_ranks_command

            return compile_ranks_command(target, nproc, out=out, collective_timeout=collective_timeout,
                                         fail_on=fail_on)
        from airctl.cli.output import status
        from airctl.cli.summary import print_summary
        from airctl.cli.verdicts import conclude
        from airctl.pipeline.compile.compiler import CompileRequest, compile_model

        # a bad pass file fails the run before anything compiles, ledger kept
        request = CompileRequest(target, out_dir=out, command_line=command_line(ctx), incremental=not full)
        with status("compiling…") as spinner:
            result = compile_model(request, progress=lambda msg: spinner.update(msg))
        # the run's error after the summary: main.py shows it and exits with its code
        return Shown(result.index, lambda: print_summary(result, verbose=verbose),
                     lambda: conclude(result, fail_on, atol=atol))

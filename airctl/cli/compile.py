"""``airctl compile``: compile a model script through TorchAir and keep a ledger of every stage."""

from __future__ import annotations

from pathlib import Path

import typer

from airctl.cli.options import (
    backend_option,
    command_line,
    config_option,
    dump_types,
    dump_types_option,
    entry_option,
    mode_option,
    out_option,
)
from airctl.modes import BackendName, Bad, Capture, Mode

HELP = (
    "Compile MODEL.py through TorchAir (Dynamo → AOT → TorchAir's FX passes → GE or aclgraph), run it once, "
    "compare with eager PyTorch, and leave a ledger of every stage.\n\n"
    "The script defines get_model() and get_inputs() (or module-level `model` and `inputs`, or use --entry). "
    "Each run gets its own folder under --out: index.json, one graph snapshot per stage, TorchAir's own dumps "
    "in torchair/, log.txt and report.html.\n\n"
    "[bold]Examples[/bold]\n\n"
    "  airctl compile fixtures/models/seed.py --mode max-autotune\n\n"
    "  airctl compile model.py --mode reduce-overhead --out runs/\n\n"
    "  airctl compile model.py --mode npugraph_ex --option capture_limit=4\n\n"
    "  airctl compile model.py --passes passes/stream.yaml --json\n\n"
    "  airctl compile fixtures/models/ddp_overlap.py --nproc 2\n"
)


def register(app: typer.Typer) -> None:
    @app.command("compile", help=HELP, no_args_is_help=True)
    def compile_cmd(
        ctx: typer.Context,
        model: Path = typer.Argument(..., help="Model script (.py).", show_default=False),
        mode: Mode = mode_option(),
        out: Path = out_option("Folder for ledgers (one run per subfolder); the run becomes its current run."),
        backend: BackendName = backend_option(),
        dump_type: str = dump_types_option(),
        entry: str = entry_option(),
        passes: Path = typer.Option(None, "--passes", "-p", help="YAML pass file to apply (see `airctl passes list`).",
                                    show_default=False),
        atol: float = typer.Option(1e-5, "--atol", help="Tolerance for the eager comparison."),
        as_json: bool = typer.Option(False, "--json", help="Print index.json to stdout instead of the summary."),
        capture: Capture = typer.Option(
            Capture.DEFAULT, "--capture",
            help="How much the ledger keeps: minimal (stages and snapshots only), default (+ readable texts, "
                 "TorchAir's txt/py dumps and the optimized GE graph's pbtxt, log, report.html), full (+ every pbtxt, "
                 "TorchAir's per-node log)."),
        fail_on: Bad = typer.Option(None, "--fail-on", show_default=False,
                                    help="Also exit non-zero (1) for this: race (the executor saw a stream race), "
                                         "check (an error finding); numerics and compile failures exit 3 anyway."),
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Print TorchAir's warnings as they come (by "
                                     "default they are kept in index.json and counted in one line)."),
        nproc: int = typer.Option(1, "--nproc", min=1, help="Ranks: compile under torchrun, a process group per "
                                  "rank, a ledger per rank (docs/multi-rank.md)."),
        collective_timeout: float = typer.Option(60.0, "--collective-timeout", min=0, help=(
            "With --nproc: the ranks' default process-group timeout under sim (s); a rank that waits longer "
            "for its peers fails.")),
        option: list[str] = config_option(),
    ) -> None:
        if verbose:
            import os

            from airctl.pipeline.compile.torchair_warnings import VERBOSE_ENV

            os.environ[VERBOSE_ENV] = "1"  # the ranks' processes too
        from airctl.pipeline.compile.options import parse_options

        if nproc > 1:
            from airctl.cli.ranks import compile_ranks_command

            parse_options(option)  # a bad --option is refused before any rank starts
            compile_ranks_command(model, nproc, out, backend.value, mode=mode.value, entry=entry, passes=passes,
                                  atol=atol, as_json=as_json, capture=capture.value,
                                  collective_timeout=collective_timeout, dump_types=dump_types(dump_type),
                                  config=list(option or []), fail_on=fail_on)
            return
        from airctl.cli.output import print_json, status, stdout_to_stderr
        from airctl.cli.summary import print_summary
        from airctl.pipeline.compile.compiler import CompileRequest, compile_model

        request = CompileRequest(  # a bad pass file fails the run before anything compiles, ledger kept
            model_path=model, mode=mode.value, out_dir=out, backend=backend.value, dump_types=dump_types(dump_type),
            entry=entry, atol=atol, passes_file=str(passes) if passes else None, command_line=command_line(ctx),
            capture=capture.value, options=parse_options(option),
        )
        with stdout_to_stderr(as_json), status("compiling…") as spinner:
            result = compile_model(request, progress=lambda msg: spinner.update(msg))
        if as_json:
            print_json(result.index.to_json())
        else:
            print_summary(result, verbose=verbose)
        if result.error is not None:
            raise result.error  # after the summary: main.py shows it and exits with its code
        from airctl.cli.verdicts import enforce_fail_on

        enforce_fail_on(fail_on, result, atol=atol)

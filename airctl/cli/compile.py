"""``airctl compile``: compile a model script through TorchAir and keep a ledger of every stage."""

from __future__ import annotations

from pathlib import Path

import typer

from airctl.cli.options import backend_option, dump_types, dump_types_option, mode_option
from airctl.modes import Backend, Capture, Mode

HELP = (
    "Compile MODEL.py through TorchAir (Dynamo → AOT → TorchAir's FX passes → GE or aclgraph), run it once, "
    "compare with eager PyTorch, and leave a ledger of every stage.\n\n"
    "The script defines get_model() and get_inputs() (or module-level `model` and `inputs`, or use --entry). "
    "Each run gets its own folder under --out: index.json, one graph snapshot per stage, TorchAir's own dumps "
    "in torchair/, log.txt and report.html.\n\n"
    "[bold]Examples[/bold]\n\n"
    "  airctl compile fixtures/models/seed.py --mode max-autotune\n\n"
    "  airctl compile model.py --mode reduce-overhead --out runs/\n\n"
    "  airctl compile model.py --passes passes/stream.yaml --json\n"
)


def register(app: typer.Typer) -> None:
    @app.command("compile", help=HELP, no_args_is_help=True)
    def compile_cmd(
        model: Path = typer.Argument(..., help="Model script (.py).", show_default=False),
        mode: Mode = mode_option(),
        out: Path = typer.Option(Path("airctl-runs"), "--out", "-o",
                                 help="Folder for ledgers (one run per subfolder)."),
        backend: Backend = backend_option(),
        dump_type: str = dump_types_option(),
        entry: str = typer.Option(None, "--entry", help="Function returning (model, inputs), or MODEL_FN,INPUTS_FN.",
                                  show_default=False),
        passes: Path = typer.Option(None, "--passes", "-p", help="YAML pass file to apply (see `airctl passes list`).",
                                    show_default=False),
        atol: float = typer.Option(1e-5, "--atol", help="Tolerance for the eager comparison."),
        as_json: bool = typer.Option(False, "--json", help="Print index.json to stdout instead of the summary."),
        capture: Capture = typer.Option(
            Capture.DEFAULT, "--capture",
            help="How much the ledger keeps: minimal (stages and snapshots only), default (+ readable texts, "
                 "TorchAir's txt/py dumps, log, report.html), full (+ pbtxt dumps, TorchAir's per-node log)."),
    ) -> None:
        from airctl.cli.output import err, print_json
        from airctl.cli.summary import print_summary
        from airctl.passes import build_hooks
        from airctl.pipeline.compile import CompileRequest, compile_model

        hooks = build_hooks(passes) if passes else None  # a bad pass file is refused before any compile
        request = CompileRequest(
            model_path=model, mode=mode.value, out_dir=out, backend=backend.value, dump_types=dump_types(dump_type),
            entry=entry, pre_pass=hooks.pre_pass if hooks else None, post_pass=hooks.post_pass if hooks else None,
            atol=atol, passes_file=str(passes) if passes else None, capture=capture.value,
        )
        with err.status("compiling…", spinner="dots") as status:
            result = compile_model(request, progress=lambda msg: status.update(msg))
        if as_json:
            print_json(result.index.to_json())
        else:
            print_summary(result)
        if result.error is not None:
            raise result.error  # after the summary: main.py shows it and exits with its code

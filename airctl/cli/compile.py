"""``airctl compile``: compile a model script through TorchAir and keep a ledger of every stage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.errors import AirctlError

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
        mode: str = typer.Option("max-autotune", "--mode", "-m",
                                 help="TorchAir mode: max-autotune | reduce-overhead."),
        out: Path = typer.Option(Path("airctl-runs"), "--out", "-o",
                                 help="Folder for ledgers (one run per subfolder)."),
        backend: str = typer.Option("auto", "--backend", "-b", help="auto | npu | sim (auto: npu when CANN loads)."),
        dump_type: str = typer.Option(
            None, "--dump-type",
            help="GE dump types, comma-separated: pbtxt,txt,py (default: all three in max-autotune, py in "
                 "reduce-overhead).", show_default=False),
        entry: str = typer.Option(None, "--entry", help="Function returning (model, inputs), or MODEL_FN,INPUTS_FN.",
                                  show_default=False),
        passes: Path = typer.Option(None, "--passes", "-p", help="YAML pass file to apply (see `airctl passes list`).",
                                    show_default=False),
        atol: float = typer.Option(1e-5, "--atol", help="Tolerance for the eager comparison."),
        as_json: bool = typer.Option(False, "--json", help="Print index.json to stdout instead of the summary."),
    ) -> None:
        from airctl.cli.output import err, print_json, render_error
        from airctl.cli.summary import print_summary
        from airctl.pipeline.compile import CompileRequest, compile_model

        dump_types = [t.strip() for t in dump_type.split(",") if t.strip()] if dump_type else None
        hooks = _load_passes(passes) if passes else None
        request = CompileRequest(
            model_path=model, mode=mode, out_dir=out, backend=backend, dump_types=dump_types, entry=entry,
            pre_pass=hooks.pre_pass if hooks else None, post_pass=hooks.post_pass if hooks else None,
            atol=atol, passes_file=str(passes) if passes else None,
        )
        with err.status("compiling…", spinner="dots") as status:
            result = compile_model(request, progress=lambda msg: status.update(msg))
        if as_json:
            print_json(result.index.to_json())
        else:
            print_summary(result)
        if result.error is not None:
            render_error(result.error)
            raise typer.Exit(int(result.error.exit_code))


def _load_passes(path: Path) -> Any:
    try:
        from airctl.passes import build_hooks
    except ImportError as e:  # pragma: no cover - the passes package ships with airctl
        raise AirctlError(f"YAML passes are not available in this build: {e}") from e
    return build_hooks(path)

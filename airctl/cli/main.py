"""The ``airctl`` entry point: builds the typer app and maps errors to exit codes.

Each command lives in its own module under :mod:`airctl.cli` and exposes ``register(app)``.
Commands are discovered from :data:`COMMAND_MODULES`; none of them imports torch at import
time, so ``airctl --help`` stays fast.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import typer

from airctl import __version__
from airctl.errors import AirctlError, ExitCode

COMMAND_MODULES = ("compile", "run", "passes", "dump", "diff", "check", "profile", "doctor")

HELP = (
    "Graph inspector and pass debugger for TorchAir (torch.compile on Ascend NPUs).\n\n"
    "Works on a real NPU (backend npu) and on any CPU machine (backend sim: TorchAir's own pipeline "
    "from the torch-npu wheel, with airctl's stand-ins for the hardware).\n\n"
    "Start with: [bold]airctl compile fixtures/models/seed.py --mode max-autotune[/bold] (compile, keep a "
    "ledger of every stage), or [bold]airctl doctor[/bold] (what is installed, which backend `auto` picks).\n"
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"airctl {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="airctl",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_show_locals=False,
        rich_markup_mode="rich",
    )

    @app.callback()
    def main(
        version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
    ) -> None:
        """airctl"""

    for name in COMMAND_MODULES:
        module_name = f"airctl.cli.{name}"
        if importlib.util.find_spec(module_name) is None:
            continue
        importlib.import_module(module_name).register(app)
    return app


def run(argv: list[str] | None = None) -> None:
    """Console-script entry: run the app, render airctl errors, exit with their code."""
    from airctl.cli.output import render_error

    app = build_app()
    try:
        rc = app(args=argv, standalone_mode=False)  # returns the code of a typer.Exit
    except AirctlError as e:
        render_error(e)
        sys.exit(int(e.exit_code))
    except KeyboardInterrupt:
        render_error(AirctlError("interrupted"))
        sys.exit(130)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except OSError as e:
        if not e.filename:
            raise
        # a path the user gave (-o, --out, --html) that cannot be written or read
        render_error(AirctlError(f"{e.strerror or e}: {e.filename}", file=str(e.filename),
                                 hint="check that the folder exists and is writable, and that the path is not "
                                      "an existing file where a folder is expected (or the other way round)"))
        sys.exit(int(ExitCode.USAGE))
    except Exception as e:  # typer/click usage errors carry their own exit code
        code = getattr(e, "exit_code", None)
        if code is not None and hasattr(e, "show"):
            e.show()
            sys.exit(code)
        raise
    sys.exit(rc if isinstance(rc, int) else int(ExitCode.OK))

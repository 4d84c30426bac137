"""The ``airctl`` app: builds the typer app, and is the CLI's one error boundary (the console script
that runs it is :mod:`airctl.cli.main`).

Each command lives in its own module under :mod:`airctl.cli` and exposes ``register(app)``; none
of them imports torch at import time, so ``airctl --help`` stays fast.

Commands never render errors or pick exit codes themselves. They raise, and
:class:`AirctlGroup` maps what they raise, in one place:

========================================  =========================================  ==========
raised                                    shown on stderr                            exit code
========================================  =========================================  ==========
:class:`~airctl.errors.AirctlError`       ``file:line: error: message`` + ``hint:``  its ``exit_code``
:class:`~airctl.errors.CommandExit`       nothing more (the command showed it)       its ``code``
``OSError`` naming a file (``-o``, ...)   ``path: error: ...`` + ``hint:``           2
``OSError`` writing output: a full disk   ``error: cannot write the output`` + hint   2
``KeyboardInterrupt`` (SIGINT)            ``error: interrupted``                     130
:class:`~airctl.errors.Terminated`        ``error: terminated by SIGTERM``           143 (SIGHUP: 129)
any other exception (a bug in airctl)     ``error: internal error: ...`` (one line)  70
========================================  =========================================  ==========

An error that wraps an interrupt, or while one is pending (something swallowed it), is that
interrupt. click's own usage errors keep their code 2. ``--traceback`` (or ``AIRCTL_TRACEBACK=1``) also
prints the Python traceback. The mapping lives in the group's ``invoke``, so the console script
(:func:`run`) and typer's ``CliRunner().invoke(build_app(), ...)`` go through the same code.
"""

from __future__ import annotations

import errno
import importlib
import sys
import traceback
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup
from typer.main import get_command

from airctl import __version__
from airctl.errors import AirctlError, CommandExit, ExitCode, Terminated, interrupt_exit_code

COMMAND_MODULES = ("compile", "run", "import_", "passes", "dump", "diff", "check", "profile", "runs", "bisect",
                   "repro", "export", "doctor", "coverage", "why")
TRACEBACK_ENV = "AIRCTL_TRACEBACK"

HELP = (
    "Graph inspector and pass debugger for TorchAir (torch.compile on Ascend NPUs).\n\n"
    "Works on a real NPU (backend npu) and on any CPU machine (backend sim: TorchAir's own pipeline "
    "from the torch-npu wheel, with airctl's stand-ins for the hardware).\n\n"
    "The loop: compile a model, apply a pass file to it, look at the GE graph, profile; edit the YAML, again. "
    "Each command works on the current run (the last one in ./airctl-runs; --run picks another):\n\n"
    "  [bold]airctl compile model.py --mode max-autotune[/bold]\n\n"
    "  [bold]airctl passes apply stream.yaml[/bold]\n\n"
    "  [bold]airctl dump --type pbtxt[/bold]\n\n"
    "  [bold]airctl profile[/bold]\n\n"
    "Also: [bold]airctl diff[/bold] (what the passes did), [bold]airctl check[/bold] (the stream plan), "
    "[bold]airctl runs[/bold], [bold]airctl show[/bold]. New here? [bold]airctl doctor[/bold] says what is "
    "installed and which backend `auto` picks.\n\n"
    "Exit codes: 0 ok; 1 the command ran and found problems (findings, races, --fail-on); "
    "2 bad input; 3 the compile failed or the outputs differ from eager; 4 your model script raised or ended "
    "the process (airctl run: the script's own code, 1 when it raises, as python gives); 70 a bug in airctl; "
    "130 interrupted (Ctrl-C); 143 terminated (SIGTERM); 129 hung up (SIGHUP).\n"
)
WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS}
OS_ERROR_HINT = ("check that the folder exists and is writable, and that the path is not an existing file where "
                 "a folder is expected (or the other way round)")


class AirctlGroup(TyperGroup):
    """The root command: runs the chosen command and maps whatever it raises to a message and an exit code."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta["airctl.argv"] = list(args)  # what made a run: recorded in its ledger (cli/options.command_line)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        from airctl.ledger.liveness import command_begins

        command_begins()  # what came before is the start-up a run's ledger records
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):  # click's own: --help, usage errors (code 2)
            raise
        except CommandExit as e:
            raise typer.Exit(e.code) from None
        except BaseException as e:  # noqa: BLE001 - the boundary: everything else becomes a message and a code
            if isinstance(e, (SystemExit, GeneratorExit)):
                raise
            if isinstance(e, OSError) and e.errno == errno.EPIPE:
                raise  # `airctl ... | head`: typer exits quietly
            code = report(e, show_traceback=_wants_traceback(ctx))
            raise typer.Exit(int(code)) from None


def report(error: BaseException, show_traceback: bool = False) -> int:
    """Show ``error`` on stderr as the CLI does, and return the exit code it maps to."""
    from airctl.cli.output import err, render_error

    if show_traceback:
        sys.stderr.write("".join(traceback.format_exception(type(error), error, error.__traceback__)))
        sys.stderr.flush()
    if isinstance(error, AirctlError):
        render_error(error)
        return int(error.exit_code)
    from airctl.pipeline.run import signals

    stop = error if isinstance(error, KeyboardInterrupt) else signals.interrupt_behind(error)
    if stop is not None:  # a signal, or what something on its way turned it into
        signals.seen()
        from airctl.io.paths import shareable

        kept = getattr(stop, "airctl_ledger", None)
        render_error(AirctlError(
            (f"terminated by {stop.name}" if isinstance(stop, Terminated) else "interrupted")
            + (f"; the run's ledger (status {'terminated' if isinstance(stop, Terminated) else 'interrupted'}): "
               f"{shareable(kept)}" if kept else ""),
            hint=("it is the current run now; `airctl runs` lists the earlier ones, `--run ID` picks one"
                  if kept else None)))
        return interrupt_exit_code(stop)
    if isinstance(error, OSError) and error.filename:
        # a path the user gave (-o, --out, --html) that cannot be written or read
        render_error(AirctlError(f"{error.strerror or error}: {error.filename}", file=str(error.filename),
                                 hint=OS_ERROR_HINT))
        return int(ExitCode.USAGE)
    if isinstance(error, OSError) and error.errno in WRITE_ERRNOS:  # stdout to /dev/full, a full disk under -o
        render_error(AirctlError(f"cannot write the output ({error.strerror or error})",
                                 hint="free space on the disk that holds it, or write somewhere else"))
        return int(ExitCode.USAGE)
    from airctl.cli.output import escape

    text = f"{type(error).__name__}: {error}".splitlines()[0] if str(error) else type(error).__name__
    again = "" if show_traceback else f"; rerun with --traceback (or {TRACEBACK_ENV}=1) to see where"
    err.print(f"[bold red]error:[/bold red] internal error: {escape(text)}{again}")
    return int(ExitCode.INTERNAL)


def _wants_traceback(ctx: Any) -> bool:
    return bool(ctx.params.get("show_traceback"))  # --traceback, or AIRCTL_TRACEBACK=1 (its envvar)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"airctl {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="airctl",
        cls=AirctlGroup,
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode="rich",
    )

    @app.callback()
    def main(
        version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
        show_traceback: bool = typer.Option(False, "--traceback", envvar=TRACEBACK_ENV, show_envvar=True,
                                       help="On an error, also print the Python traceback."),
        cold: bool = typer.Option(False, "--cold", help="Run this command in a fresh process, not forked from the "
                                  "warm process (as AIRCTL_WARM=0 does for every command; docs/warm.md)."),
    ) -> None:
        """airctl"""
        from airctl.settings import check_environment
        from airctl.torch_env import ensure_torch_importable

        check_environment()  # a mistyped AIRCTL_* setting: an error naming it, before any work
        ensure_torch_importable()  # before any command imports torch (CliRunner enters here, not through run())

    for name in COMMAND_MODULES:
        importlib.import_module(f"airctl.cli.{name}").register(app)
    return app


def run_app(argv: list[str] | None = None) -> NoReturn:
    """Run the app and exit with its code (raises SystemExit; :func:`airctl.cli.main.run` is the console script)."""
    from airctl.torch_env import ensure_torch_importable

    ensure_torch_importable()  # before any command imports torch (without CANN, torch-npu's autoload breaks it)
    get_command(build_app()).main(args=argv, prog_name="airctl")  # standalone: always raises SystemExit
    raise AssertionError("unreachable: click's standalone main exits")  # pragma: no cover

"""One output protocol: a command returns what it found, and one place decides what stdout gets.

A command decorated with :func:`reports` (:func:`airctl.cli.declare.command` does it) gets ``--json``
without declaring it, and returns a :class:`Shown`: the result (what ``--json`` prints, through its ``to_json()``), the
terminal view of the same result, and the verdict that decides the exit status once it is shown.
:func:`reports` runs the command with stdout handed to stderr when ``--json`` is given (a model
script's prints, TorchAir's, the compile's: stdout is JSON and nothing else), then prints either the
JSON or the view, then the verdict. So no command branches on ``--json`` itself, and a number is
printed by the one view of its result — the same in every command that shows that result.

A command that must know (``passes apply --json`` asks for the per-pass diffs the JSON carries) reads
:func:`json_wanted`. Nothing here imports torch.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import typer

from airctl.cli.signature import with_parameters

_JSON: contextvars.ContextVar[bool] = contextvars.ContextVar("airctl_json", default=False)

JSON_HELP = "Print the result as JSON on stdout (and nothing else: progress and the model's prints go to stderr)."


@dataclass(frozen=True)
class Shown:
    """What a command found. ``result``: what ``--json`` prints (an object with ``to_json()``, called
    only then; or plain data; None: nothing); ``view``: the terminal's view of it (None: nothing on
    stdout beyond what the command printed itself); ``verdict``: runs after either, and raises what
    ends the command (the run's error, a :class:`~airctl.errors.FindingsExit`), or returns for exit 0."""

    result: Any
    view: Callable[[], None] | None = None
    verdict: Callable[[], None] | None = None


def raising(error: BaseException | None) -> Callable[[], None] | None:
    """The verdict of a result that carries the error ending its command (None: none, exit 0)."""
    if error is None:
        return None

    def verdict() -> None:
        raise error

    return verdict


def json_wanted() -> bool:
    """Whether the command running now prints JSON (``--json``)."""
    return _JSON.get()


def reports(help: str = JSON_HELP, panel: str | None = None) -> Callable[[Callable[..., Shown]], Callable[..., None]]:
    """Decorate a command (:func:`airctl.cli.declare.command` stacks it under ``@app.command``): it gets
    ``--json`` (``help`` says what the JSON is; ``panel``: its panel of ``--help``) and returns a :class:`Shown`."""

    def decorate(command: Callable[..., Shown]) -> Callable[..., None]:
        option = typer.Option(False, "--json", help=help, rich_help_panel=panel)

        @functools.wraps(command)
        def run(*, as_json: bool = False, **kwargs: Any) -> None:
            from airctl.cli.output import print_json, stdout_to_stderr

            token = _JSON.set(as_json)
            try:
                with stdout_to_stderr(as_json):
                    shown = command(**kwargs)
                if as_json:
                    print_json(shown.result)  # its to_json() only now: a command without --json never makes it
                elif shown.view is not None:
                    shown.view()
                if shown.verdict is not None:
                    shown.verdict()
            finally:
                _JSON.reset(token)

        run.airctl_reports = True  # type: ignore[attr-defined]  # tests/cli/test_shown.py finds the undecorated
        return with_parameters(run, command, added={"as_json": (bool, option)})

    return decorate

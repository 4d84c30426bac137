"""The options every compiling command shares, declared once, and the one helper that builds a Target.

Every command that compiles (or runs) a model — ``compile``, ``run``, ``profile``, ``bisect``,
``passes apply``/``explain``/``suggest``/``fix``, ``coverage``, and ``check``/``dump``/``diff`` of a
model script — takes the options every mode honours (:class:`~airctl.pipeline.target.EveryMode`:
``--backend``, ``--seed``). Each is declared here once (:data:`OPTIONS`): :func:`every_mode_options`
puts them into a command's signature where the command has a parameter ``every: EveryMode =
EVERY_MODE``, and hands the command one :class:`EveryMode`, which the command passes down to whatever
compiles; :func:`build_target` turns it and the command's own options (mode, entry, pass file,
``--option``s, …) into the Target where the command itself knows the model.

So an option every mode honours is a field of ``EveryMode`` and ``Target`` (pipeline/target.py), its
option here, and the code that uses it; no command module changes (docs/architecture.md, "Where a
change goes"; tests/cli/test_every_mode.py). Nothing here imports torch at import time (``airctl
--help`` stays fast).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from airctl.cli.options import backend_option
from airctl.cli.signature import with_parameters
from airctl.modes import Mode
from airctl.pipeline.target import EveryMode

if TYPE_CHECKING:
    from airctl.pipeline.target import Target

SEED_MAX = 2**32 - 1  # NumPy's largest seed; torch and Python take it too


def _seed_option(panel: str | None) -> Any:
    return typer.Option(None, "--seed", min=0, max=SEED_MAX, metavar="N", show_default=False, rich_help_panel=panel,
                        help="Seed torch, Python's random and NumPy with N before the model (or script) runs, before "
                             "the eager reference and before the compiled run, in every rank: random weights, inputs "
                             "and dropout repeat from run to run. Recorded in index.json.")


OPTIONS: dict[str, Callable[[str | None], Any]] = {
    "backend": lambda panel: backend_option(rich_help_panel=panel),
    "seed": _seed_option,
}
"""The typer option of each :class:`~airctl.pipeline.target.EveryMode` field, by field name (a panel of
``--help`` in, the option out)."""


MODEL_SCRIPT = "When the source is a model script (compiled first)"  # their --help panel in check, dump, diff
EVERY_MODE = EveryMode()  # the placeholder default of a command's ``every`` parameter


def every_mode_options(panel: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command (:func:`airctl.cli.declare.command` stacks it): its ``every`` parameter becomes
    the options of :class:`EveryMode` (in ``panel`` of ``--help``), and the command receives them as one
    ``EveryMode``."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        types = typing.get_type_hints(EveryMode)

        def options(every: inspect.Parameter) -> list[inspect.Parameter]:
            return [inspect.Parameter(f.name, every.kind, default=OPTIONS[f.name](panel), annotation=types[f.name])
                    for f in fields(EveryMode)]

        @functools.wraps(command)
        def run(**kwargs: Any) -> Any:
            every = EveryMode(**{f.name: kwargs.pop(f.name) for f in fields(EveryMode)})
            return command(every=every, **kwargs)

        return with_parameters(run, command, replaced={"every": options})

    return decorate


def build_target(model: Path, every: EveryMode, *, mode: Mode | str | None = None, entry: str | None = None,
                 passes: Path | str | None = None, option: list[str] | None = None, **settings: Any) -> Target:
    """The :class:`~airctl.pipeline.target.Target` of a command line: ``every`` as it is, ``mode`` (None:
    max-autotune), ``--option``s parsed and checked (a bad one is refused here, before anything runs);
    ``settings`` are other Target fields by name (atol, capture, dump_types, verbose)."""
    from airctl.pipeline.compile.options import parse_options

    return every.target(model, mode=mode or Mode.MAX_AUTOTUNE, entry=entry,
                        passes_file=Path(passes) if passes is not None else None, options=parse_options(option),
                        **settings)


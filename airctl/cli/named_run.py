"""A run named on the command line, declared once: RUN, ``--run RUN``, and the folder of ledgers it is in.

``airctl show``, ``why``, ``repro``, ``export tlparse`` and ``passes fix`` each read one run, which the
user names as RUN (a positional), as ``--run RUN`` (every command takes it), or not at all (the
current run of the folder). Each command declared those three parameters and called the SOURCE
resolver with them itself. Now a command takes ``which: NamedRun = IN_OUT`` (the folder is
``--out``) or ``IN_RUNS`` (``--runs``, where ``-o/--out`` is the command's own output);
:func:`airctl.cli.declare.command` turns that into the three parameters (:func:`named_run_options`),
and the command receives one :class:`NamedRun`, whose :attr:`~NamedRun.root` is the ledger.
Nothing here imports torch.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from airctl.cli.options import RUNS_DIR, out_option, run_argument, run_option, runs_option
from airctl.cli.signature import with_parameters

RUN_OPTION_HELP = "The run, as RUN (every command takes --run)."


@dataclass(frozen=True)
class NamedRun:
    """RUN (``given``), ``--run`` (``run``) and the folder of ledgers (``folder``, the command's
    ``option``): what the command line said of the run to read."""

    given: str | None = None
    run: str | None = None
    folder: Path = RUNS_DIR
    option: str = "--out"

    @property
    def root(self) -> Path:
        """The run's ledger folder (errors name RUN, ``--run`` and the folder's option: exit 2)."""
        from airctl.pipeline.source import resolve_source

        return resolve_source(self.given, self.run, out_dir=self.folder, option=self.option).path


IN_OUT = NamedRun(option="--out")  # the placeholder defaults of a command's ``which`` parameter
IN_RUNS = NamedRun(option="--runs")
_FOLDER_HELP = "Folder of ledgers where the run is."


def named_run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a command: its ``which`` parameter becomes RUN, ``--run`` and the folder's option (as
    its default, :data:`IN_OUT` or :data:`IN_RUNS`, says), and the command receives one :class:`NamedRun`."""

    declared: list[NamedRun] = []  # the parameter's default: which folder option

    def options(which: inspect.Parameter) -> list[inspect.Parameter]:
        if which.default not in (IN_OUT, IN_RUNS):
            raise TypeError(f"{command.__name__}: `which: NamedRun` takes IN_OUT or IN_RUNS as its default, "
                            f"not {which.default!r}")
        declared.append(which.default)
        kind = which.kind
        folder = runs_option() if which.default.option == "--runs" else out_option(_FOLDER_HELP)
        return [inspect.Parameter("given", kind, default=run_argument(), annotation=str),
                inspect.Parameter("run", kind, default=run_option(RUN_OPTION_HELP), annotation=str),
                inspect.Parameter("folder", kind, default=folder, annotation=Path)]

    @functools.wraps(command)
    def run(*, given: str | None = None, run: str | None = None, folder: Path = RUNS_DIR, **kwargs: Any) -> Any:
        return command(which=replace(declared[0], given=given, run=run, folder=Path(folder)), **kwargs)

    return with_parameters(run, command, replaced={"which": options})

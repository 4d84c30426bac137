"""May a command write the file a user named (``-o``, ``--html``, ``--svg``)? Never over its inputs or a ledger.

A careless ``airctl dump RUN -o RUN/index.json`` once replaced a ledger's index, and ``airctl diff
a b --html a`` its own input. :func:`claim_output` is asked before any work is done: it refuses a
path that is one of the command's inputs, that lies inside a ledger folder (a folder with an
``index.json``: ledgers are written by airctl runs only), or that is a folder of runs' current-run
pointer (``latest``: overwritten, every command in that folder would fail), or that is not a regular
file (a FIFO would block the command, a device swallow the output). An ordinary file that exists is overwritten,
as ``cp`` and ``sort -o`` do: users re-run ``airctl dump --type svg -o g.svg`` in their loop, and a
refusal every second time taught nothing (``dump`` and ``diff`` still accept ``--force``, for old scripts).
Its errors name the path and say what to do. Every command that writes a file a user names asks it:
``dump -o``, ``diff --html/--svg``, ``passes suggest -o``, ``passes fix -o``
(:mod:`airctl.pipeline.output_claim` adds a run's own inputs: its model script and pass file).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from airctl.errors import AirctlError
from airctl.ledger_files import INDEX, is_ledger, is_runs_pointer
from airctl.safe_files import kind_of


def _ledger_of(path: Path) -> Path | None:
    for folder in path.parents:
        if is_ledger(folder):
            return folder
    return None


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def claim_output(out: Path | str, inputs: Iterable[Path | str | None] = (), *, option: str = "-o") -> Path:
    """``out`` if the command may write it; an AirctlError (exit 2) naming it otherwise."""
    out = Path(out)
    for source in inputs:
        if source is not None and (_same(out, Path(source)) or
                                   (Path(source).is_dir() and Path(source).resolve() in out.resolve().parents)):
            raise AirctlError(f"refusing to write {option} {out}: it is (inside) an input of this command",
                              file=str(out), hint=f"choose another {option} path; airctl never overwrites its inputs")
    if is_runs_pointer(out.resolve()) or is_runs_pointer(out.absolute()):
        raise AirctlError(f"refusing to write {option} {out}: it is the current-run pointer of {out.parent}",
                          file=str(out), hint="airctl writes that file itself; write the output elsewhere")
    ledger = _ledger_of(out.resolve())
    if ledger is not None or out.name == INDEX and (out.parent / "graphs").is_dir():
        raise AirctlError(f"refusing to write {option} {out}: it is inside the ledger {ledger or out.parent}",
                          file=str(out), hint="ledgers are written by airctl runs only; write the file elsewhere")
    try:
        mode = os.stat(out).st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise AirctlError(f"{option} {out} is a folder", file=str(out), hint=f"give a file path to {option}")
    if mode is not None and not stat.S_ISREG(mode):
        raise AirctlError(f"refusing to write {option} {out}: it is {kind_of(mode)}, not a regular file",
                          file=str(out), hint=f"give {option} an ordinary file path")
    return out

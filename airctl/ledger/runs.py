"""The runs in an ``--out`` folder, and which one is current (how users loop, docs/ledger.md).

Every run that writes a ledger marks itself, when it ends (ok, failed or interrupted), as the
latest of its ``--out`` folder: ``<out>/latest`` is a one-line text file holding the run id —
plain text works on every OS (no symlinks), and it is replaced atomically (a temporary file,
then a rename), so two runs ending at once leave one valid pointer. Commands given no source use
:func:`resolve_run`: ``--run ID`` (an id, a unique prefix of one, a ledger path, ``latest``, or
``latest~N``: the N-th run before it) or else the latest.

>>> import tempfile; out = Path(tempfile.mkdtemp())
>>> resolve_run(out)
Traceback (most recent call last):
...
airctl.errors.LedgerError: no run in ... yet
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl import ledger_files
from airctl.errors import LedgerError
from airctl.ledger.index_load import read_index
from airctl.ledger.pointer import read_pointer, write_pointer
from airctl.ledger.record import INDEX
from airctl.ledger_files import is_ledger
from airctl.modes import Mode
from airctl.safe_files import check_folder

LATEST = ledger_files.LATEST  # the current-run pointer
def start_hint(option: str = "--out") -> str:
    """What to do when a folder has no run: make one, or name the folder the runs are in (``option``:
    the command's option for it, ``--runs`` where ``-o/--out`` is the command's own output)."""
    return f"start with `airctl compile MODEL.py` (or `airctl run SCRIPT.py`); runs in another folder: {option} DIR"


def mark_latest(out_dir: Path, run_id: str) -> None:
    """Make ``run_id`` the current run of ``out_dir``: atomic (readers see the old or the new id), in
    place on a full disk, no temporary file left on any failure (:mod:`airctl.ledger.pointer`). A run
    whose folder was deleted while it ran is not made current (the pointer would name nothing)."""
    if not is_ledger(Path(out_dir) / run_id):
        return
    write_pointer(Path(out_dir) / LATEST, run_id)


def shown_folder(out_dir: Path | str) -> str:
    """``out_dir`` as messages name it: ``./runs`` for a relative ``runs``, an absolute path as it is."""
    text = str(Path(out_dir))
    return text if Path(text).is_absolute() or text.startswith(".") else f"./{text}"


def run_folders(out_dir: Path) -> list[Path]:
    """The ledgers directly under ``out_dir``, newest first (run ids start with their time); LedgerError
    when ``out_dir`` is not a folder (a file, ``/dev/null``, a link to nothing: never "no run yet")."""
    if not check_folder(out_dir, what="folder of runs (--out)"):
        return []
    return sorted((p for p in out_dir.iterdir() if p.is_dir() and is_ledger(p)), key=lambda p: p.name, reverse=True)


def latest_run(out_dir: Path, option: str = "--out") -> Path:
    """The current run of ``out_dir``; LedgerError (exit 2) with what to do when there is none."""
    out_dir = Path(out_dir)
    check_folder(out_dir, what="folder of runs (--out)")
    pointer = out_dir / LATEST
    if os.path.lexists(pointer):
        run_id = read_pointer(pointer)  # a link, a FIFO, a huge file or anything but an id: LedgerError
        root = out_dir / run_id
        if is_ledger(root):
            return root
        others = run_folders(out_dir)
        raise LedgerError(f"the current run {run_id!r} of {shown_folder(out_dir)} no longer exists (deleted or moved)",
                          file=str(pointer),
                          hint=(f"`airctl runs` lists the {len(others)} run(s) left; pick one with --run ID, or "
                                if others else "") + start_hint(option))
    folders = run_folders(out_dir)  # ledgers written before `latest` existed: the newest one
    if folders:
        return folders[0]
    raise LedgerError(f"no run in {shown_folder(out_dir)} yet", hint=start_hint(option))


def resolve_run(out_dir: Path, run: str | Path | None = None, option: str = "--out") -> Path:
    """The ledger a command works on: ``run`` (id, unique id prefix, ledger path, ``latest``, or
    ``latest~N``), else the latest; ``option``: the command's option naming ``out_dir``, for the hint."""
    if run is None:
        return latest_run(out_dir, option)
    as_path = Path(run)
    if is_ledger(as_path):
        return as_path
    if as_path.is_dir():
        raise LedgerError(f"not a ledger: no {INDEX}", file=str(as_path),
                          hint="give a run id from `airctl runs`, or the folder `airctl compile` printed")
    text = str(run)
    if text == LATEST:
        return latest_run(out_dir, option)
    if text.startswith(LATEST + "~"):
        return _before_latest(Path(out_dir), text, option)
    if is_ledger(Path(out_dir) / text):
        return Path(out_dir) / text
    matches = matching_runs(out_dir, text)
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise LedgerError(f"no run {text!r} in {shown_folder(out_dir)}",
                          hint="`airctl runs` lists the run ids (a unique part of one is enough)")
    names = ", ".join(p.name for p in matches[:5])
    raise LedgerError(f"{text!r} matches {len(matches)} runs in {shown_folder(out_dir)}: {names}",
                      hint="give more of the run id")


def _before_latest(out_dir: Path, text: str, option: str) -> Path:
    """``latest~N``: the N-th run before the current one, as runs are listed (newest first)."""
    count = text.removeprefix(LATEST + "~")
    if not count.isdigit():
        raise LedgerError(f"{text!r} is not a run: `latest~N` counts runs back from the current one",
                          hint="latest~1 is the run before the current one (`airctl runs` lists them)")
    current = latest_run(out_dir, option)
    names = [p.name for p in run_folders(out_dir)]
    before = len(names) - 1 - names.index(current.name) if current.name in names else 0
    if int(count) > before:
        raise LedgerError(f"no run {text!r} in {shown_folder(out_dir)}: {before} run(s) before the current one",
                          hint="`airctl runs` lists them, newest first")
    return out_dir / names[names.index(current.name) + int(count)]


def matching_runs(out_dir: Path, text: str) -> list[Path]:
    """The ledgers of ``out_dir`` whose id contains ``text`` (newest first)."""
    return [p for p in run_folders(Path(out_dir)) if p.name.startswith(text) or text in p.name]


@dataclass
class RunRow:
    """One line of ``airctl runs``."""

    id: str
    path: str
    created: str | None
    command: str | None
    model: str | None
    mode: Mode | None
    passes: str | None
    status: str | None
    matches_eager: bool | None
    races: int
    seconds: float | None
    current: bool
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "mode": self.mode.value if self.mode else None}


def _row(root: Path, current: bool) -> RunRow:
    """One run's row, from its index read as every reader reads it (:func:`~airctl.ledger.index_load.read_index`);
    LedgerError (listed as unreadable, with the reason) when the index is malformed."""
    index = read_index(root, warn=False)
    execution = index.execution or {}
    return RunRow(
        id=root.name, path=str(root), created=index.created, command=index.command,
        model=(index.model or {}).get("path"), mode=index.run_mode, passes=index.passes, status=index.status,
        matches_eager=execution.get("matches_eager"), races=len(execution.get("races") or []),
        seconds=index.timings.get("total_seconds"), current=current, error=index.error)


def list_runs(out_dir: Path) -> list[RunRow]:
    """Every run of ``out_dir``, newest first, from its index.json (a damaged index is listed, not fatal)."""
    out_dir = Path(out_dir)
    folders = run_folders(out_dir)  # LedgerError when out_dir is not a folder
    try:
        current = latest_run(out_dir).name
    except LedgerError:
        current = None
    rows = []
    for root in folders:
        try:
            rows.append(_row(root, root.name == current))
        except LedgerError as e:
            rows.append(RunRow(root.name, str(root), None, None, None, None, None, "unreadable", None, 0, None,
                               root.name == current, error=e.message))
    rows.sort(key=lambda r: (r.created or "", r.id), reverse=True)  # when it started (ms), then the id
    return rows

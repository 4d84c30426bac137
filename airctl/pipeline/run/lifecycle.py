"""A run, from its ledger's creation to its end, whatever ends it: the one owner of that lifecycle.

Every command that writes a ledger (compile, passes apply, profile, ``airctl run``, import, each
bisect step, repro's checks, each rank of ``--nproc``) runs its body inside a :class:`Run`::

    with Run.create(out_dir, "seed", command="compile", mode="max-autotune") as run:
        ...  # run.ledger: the LedgerWriter; the body records stages, results, its own errors

The body ends the run itself when it knows how it went (``ledger.finish(status)``); the
:class:`Run` ends it for everything else, so no ledger is left ``running``:

- **signals** (SIGINT, SIGTERM, SIGHUP, :mod:`~airctl.pipeline.run.signals`): ``interrupted`` or
  ``terminated`` with the signal's name, then the interrupt goes on to the CLI (exit 130/143/129);
- **the user's code ending the process** with ``os._exit`` (:mod:`~airctl.pipeline.run.boundary`):
  the run is closed ``failed`` naming the file and line that called it, a message says so on
  stderr, and the process ends with :data:`~airctl.errors.ExitCode.SCRIPT_FAILED` (``airctl run``:
  with the script's own code, as ``python SCRIPT.py`` would);
- **anything else** escaping the body (a bug): ``failed`` with the exception, re-raised;
- **SIGKILL** and power cuts cannot be caught: the index names the writing process
  (:mod:`airctl.ledger.liveness`), and readers show such a run as ``died``;
- **a native crash** (a segfault, torch's C++ aborting) cannot be caught either: its Python stacks
  go to ``crash.txt`` in the ledger (:mod:`~airctl.pipeline.run.crash_record`), which readers quote.

Whatever the status, the run becomes the current run of its ``--out`` folder when it ends
(:meth:`airctl.ledger.writer.LedgerWriter.finish`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from airctl.errors import ExitCode, Terminated
from airctl.ledger.liveness import library_frame
from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.run import signals
from airctl.pipeline.run.boundary import guarded_exit, reopen_std_streams
from airctl.pipeline.run.crash_record import CrashRecord

OPEN = ("running", "ok", "planned")
_AIRCTL = Path(__file__).resolve().parents[2]  # statuses an interrupt overrides (a failed run keeps its error)


def mark_interrupted(ledger: LedgerWriter, interrupt: KeyboardInterrupt, override: bool = False) -> None:
    """End ``ledger`` ``interrupted`` (Ctrl-C) or ``terminated`` (SIGTERM, SIGHUP), unless it already
    ended with an error of its own; ``where`` says what the process was doing when the signal came
    (the user's own code, e.g. a rank stuck in ``get_model()``: ``user_code``). ``override``: also
    over an error the run ended with (the interrupt came first, and caused it)."""
    try:  # the message says where the run was kept (app.py, main.py)
        interrupt.airctl_ledger = str(ledger.shown)  # type: ignore[attr-defined]
    except AttributeError:
        pass
    if ledger.run_index.status not in OPEN and not override:
        return
    where, user_code = interrupted_at(interrupt)
    detail = {"where": where, "user_code": user_code} if where else {}
    if isinstance(interrupt, Terminated):
        ledger.fail(f"terminated by {interrupt.name}" + (f" in {where}" if user_code else ""),
                    {"type": "Terminated", "signal": interrupt.name, **detail})
        ledger.finish("terminated")
    else:
        ledger.fail("interrupted" + (f" in {where}" if user_code else ""),
                    {"type": "KeyboardInterrupt", "signal": "SIGINT", **detail})
        ledger.finish("interrupted")


def interrupted_at(interrupt: BaseException) -> tuple[str | None, bool]:
    """The innermost frame the interrupt was raised in, outside airctl, and whether it is the user's
    code (not a library's, not Python's own)."""
    import traceback

    frames = [f for f in traceback.extract_tb(interrupt.__traceback__) if not _airctl(f.filename)]
    if not frames:
        return None, False
    last = frames[-1]
    return f"{last.name} at {last.filename}:{last.lineno}", not library_frame(last.filename)


def _airctl(filename: str) -> bool:
    return _AIRCTL in Path(filename).resolve().parents


class Run:
    """One run's lifecycle around its body (see the module)."""

    def __init__(self, create: Any, *, script_exit_code: bool = False, what: str = "the model script") -> None:
        self._create = create
        self.script_exit_code = script_exit_code  # airctl run: os._exit(n) ends airctl with n, as python would
        self.what = what
        self.ledger: LedgerWriter | None = None
        self._guard: Any = None
        self._crash: CrashRecord | None = None

    @classmethod
    def create(cls, out_dir: Path | str, label: str, *, script_exit_code: bool = False, what: str = "the model script",
               **fields: Any) -> Run:
        """A run in a new folder under ``out_dir``; ``fields`` are index.json's run-level keys."""
        return cls(lambda: LedgerWriter.create(out_dir, label, **fields), script_exit_code=script_exit_code,
                   what=what)

    @classmethod
    def create_at(cls, root: Path | str, *, script_exit_code: bool = False, what: str = "the model script",
                  **fields: Any) -> Run:
        """A run in exactly ``root`` (a rank's ``ranks/<rank>``)."""
        return cls(lambda: LedgerWriter.create_at(root, **fields), script_exit_code=script_exit_code, what=what)

    @classmethod
    def of(cls, out_dir: Path | str, label: str, root: Path | str | None, **kwargs: Any) -> Run:
        """:meth:`create_at` ``root`` when given (a rank), else :meth:`create` under ``out_dir``."""
        return cls.create_at(root, **kwargs) if root is not None else cls.create(out_dir, label, **kwargs)

    def __enter__(self) -> Run:
        self._cwd = _cwd()
        self.ledger = self._create()
        try:
            self._crash = CrashRecord.start(self.ledger.root)
            self._guard = guarded_exit(self._process_exit)
            self._guard.__enter__()
        except BaseException as e:  # an interrupt between the two: the ledger exists, so it ends
            if self._crash is not None:
                self._crash.stop()
            self._close(e)
            raise
        return self

    def __exit__(self, kind: Any, error: BaseException | None, tb: Any) -> None:
        try:
            try:
                self._guard.__exit__(None, None, None)
            finally:
                if self._crash is not None:
                    self._crash.stop()
                stop = signals.pending_interrupt() if not isinstance(error, KeyboardInterrupt) else None
                if stop is None:
                    self._close(error)
        finally:
            reopen_std_streams()  # the user's code may have closed them: what reports the run's end needs them
            _restore_cwd(getattr(self, "_cwd", None))  # and changed the working folder: paths as typed hold again
        if stop is not None:  # a signal the body never saw: something on its way turned it into another error
            assert self.ledger is not None
            signals.seen()
            mark_interrupted(self.ledger, stop, override=True)
            raise stop from error

    def _close(self, error: BaseException | None) -> None:
        ledger = self.ledger
        assert ledger is not None
        if isinstance(error, KeyboardInterrupt):
            signals.seen()
            mark_interrupted(ledger, error)
        elif error is not None and ledger.run_index.status == "running":  # escaped the body: a bug, or an exit
            if not isinstance(error, SystemExit) or error.code not in (0, None):  # sys.exit(0) ends it ok
                ledger.fail(f"{type(error).__name__}: {error}", {"type": type(error).__name__})
            ledger.finish("failed" if ledger.run_index.status == "failed" else None)
        elif ledger.run_index.status == "running":
            ledger.finish()

    def _process_exit(self, code: int, where: str) -> int:
        """``os._exit(code)`` called at ``where`` while this run was open: close it and say so."""
        ledger = self.ledger
        assert ledger is not None
        if self._crash is not None:
            self._crash.stop()
        final = code if self.script_exit_code else int(ExitCode.SCRIPT_FAILED)
        message = f"{self.what} ended the process: os._exit({code}) at {where}"
        if ledger.run_index.status == "running":
            if self.script_exit_code and code == 0:
                ledger.set(script={"exit_code": 0, "ended_by": f"os._exit(0) at {where}"})
                ledger.finish()
            else:
                ledger.fail(message, {"type": "ProcessExit", "exit_code": code, "where": where,
                                      "hint": "airctl closed the run; os._exit skips every cleanup, "
                                              "return or raise instead"})
                ledger.finish("failed")
        if not (self.script_exit_code and code == 0):
            sys.stderr.write(f"error: {message}\nhint: the run is closed: {ledger.shown}\n")
        return final


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the working folder was removed
        return None


def _restore_cwd(cwd: str | None) -> None:
    """Back to the working folder the run started in, when the user's code left another."""
    if cwd is None:
        return
    try:
        if os.getcwd() != cwd:
            os.chdir(cwd)
    except OSError:
        pass

"""A run, from its ledger's creation to its end, whatever ends it: the one owner of that lifecycle.

Every command that writes a ledger (compile, passes apply, profile, ``airctl run``, import, each
bisect step, repro's checks, each rank of ``--nproc``, the multi-rank launcher) runs its body inside
a :class:`Run`, and ends it through the same :class:`Run`::

    with Run.create(out_dir, "seed", command="compile", mode="max-autotune") as run:
        ...                                  # run.ledger: the LedgerWriter; the body records stages
        run.fail(error, status="mismatch")   # an AirctlError (or a message and its detail), or
        run.finish(report=True)              # ok (or the status given), findings, log, report.html

:meth:`Run.fail` and :meth:`Run.finish` are the only ways a run ends; a body that returns without
either ends ``ok``. The :class:`Run` ends it for everything else, so no ledger is left ``running``:

- **signals** (SIGINT, SIGTERM, SIGHUP, :mod:`~airctl.pipeline.run.signals`): ``interrupted`` or
  ``terminated`` with the signal's name (:meth:`Run.interrupt`), then the interrupt goes on to the
  CLI (exit 130/143/129). The whole run, not only a compile, is a :func:`~.signals.redelivered`
  block: in a process that did not arm the handlers (airctl as a library, a test) an interrupt a
  finalizer dropped comes again, as it does under the console script;
- **the user's code ending the process** with ``os._exit`` (:mod:`~airctl.pipeline.run.boundary`):
  the run is closed ``failed`` naming the file and line that called it, a message says so on
  stderr, and the process ends with :data:`~airctl.errors.ExitCode.SCRIPT_FAILED` (``airctl run``:
  with the script's own code, as ``python SCRIPT.py`` would);
- **anything else** escaping the body (a bug): ``failed`` with the exception, re-raised;
- **SIGKILL** and power cuts cannot be caught: the index names the writing process
  (:mod:`airctl.ledger.liveness`), and readers show such a run as ``died``;
- **a native crash** (a segfault, torch's C++ aborting) cannot be caught either: its Python stacks
  go to ``crash.txt`` in the ledger (:mod:`~airctl.pipeline.run.crash_record`), which readers quote.

A run whose process ended before it did (a rank killed under the launcher) is ended by whoever
finds it, through :meth:`Run.adopt`. Whatever the status, the run becomes the current run of its
``--out`` folder when it ends (:meth:`airctl.ledger.writer.LedgerWriter.finish`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import Any

from airctl.errors import AirctlError, ExitCode, Terminated
from airctl.escape import printable
from airctl.ledger.liveness import library_frame
from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.run import signals
from airctl.pipeline.run.boundary import guarded_exit, reopen_std_streams
from airctl.pipeline.run.crash_record import CrashRecord
from airctl.pipeline.run.finish import Findings, record_outcome

OPEN = ("running", "ok", "planned")  # statuses an interrupt overrides (a failed run keeps its error)
_AIRCTL = Path(__file__).resolve().parents[2]
Detail = dict[str, Any]


def _interrupted_at(interrupt: BaseException) -> tuple[str | None, bool]:
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
    """One run's lifecycle around its body, and its one way to end (see the module).

    ``session``: what the run's capture found (verify-each's findings, whether ``log.txt`` is
    airctl's to compress), set by the body once it has one; :meth:`finish` records it."""

    def __init__(self, create: Callable[[], LedgerWriter], *, script_exit_code: bool = False,
                 what: str = "the model script") -> None:
        self._create = create
        self.script_exit_code = script_exit_code  # airctl run: os._exit(n) ends airctl with n, as python would
        self.what = what
        self.session: Findings | None = None
        self._ledger: LedgerWriter | None = None
        self._guard: AbstractContextManager[None] | None = None
        self._crash: CrashRecord | None = None
        self._redelivery: AbstractContextManager[signals.Redelivery] | None = None
        self._cwd: str | None = None

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

    @classmethod
    def adopt(cls, ledger: LedgerWriter) -> Run:
        """The run of a ledger another process left ``running`` when it ended (a rank killed under
        the launcher), to be ended here with :meth:`fail` or :meth:`finish`; it is never entered."""
        run = cls(lambda: ledger)
        run._ledger = ledger
        return run

    @property
    def ledger(self) -> LedgerWriter:
        """The run's ledger writer (from the moment the run is entered)."""
        if self._ledger is None:
            raise RuntimeError("the run has no ledger before it is entered")
        return self._ledger

    def fail(self, error: AirctlError | str, detail: Detail | None = None, *, status: str = "failed",
             report: bool = False, draft: Any = None) -> None:
        """End the run with ``error`` (an :class:`AirctlError`: its message and JSON; or a message
        and its ``detail``) and ``status`` (``failed``, or e.g. ``mismatch``); then as :meth:`finish`."""
        if isinstance(error, AirctlError):
            error, detail = error.message, error.to_json()
        self.ledger.fail(error, detail)
        self.finish(status, report=report, draft=draft)

    def finish(self, status: str | None = None, *, report: bool = False, draft: Any = None) -> None:
        """End the run ``ok`` (a run that failed stays failed) or with ``status``; then the findings of
        :attr:`session` into the index, ``log.txt`` compressed and, with ``report``, ``report.html``
        (from ``draft``, made earlier, when it still fits). Ctrl-C while they run (waiting for the
        ledger's files, compressing, writing the report) marks a run that was ending ok
        ``interrupted``, as it would be a moment earlier; a failed run keeps its error."""
        ledger = self.ledger
        try:
            ledger.finish(status)
            record_outcome(ledger, self.session, report=report, draft=draft)
        except KeyboardInterrupt as stop:
            self.interrupt(stop)
            raise

    def interrupt(self, stop: KeyboardInterrupt, *, override: bool = False) -> None:
        """End the run ``interrupted`` (Ctrl-C) or ``terminated`` (SIGTERM, SIGHUP) by ``stop``, unless
        it already ended with an error of its own; ``where`` says what the process was doing when the
        signal came (the user's own code, e.g. a rank stuck in ``get_model()``: ``user_code``).
        ``override``: also over an error the run ended with (the interrupt came first, and caused it)."""
        ledger = self.ledger
        try:  # the message says where the run was kept (app.py, main.py)
            stop.airctl_ledger = str(ledger.shown)  # type: ignore[attr-defined]
        except AttributeError:
            pass
        if ledger.run_index.status not in OPEN and not override:
            return
        where, user_code = _interrupted_at(stop)
        detail = {"where": where, "user_code": user_code} if where else {}
        if isinstance(stop, Terminated):
            ledger.fail(f"terminated by {stop.name}" + (f" in {where}" if user_code else ""),
                        {"type": "Terminated", "signal": stop.name, **detail})
            ledger.finish("terminated")
        else:
            ledger.fail("interrupted" + (f" in {where}" if user_code else ""),
                        {"type": "KeyboardInterrupt", "signal": "SIGINT", **detail})
            ledger.finish("interrupted")

    def __enter__(self) -> Run:
        self._cwd = _cwd()
        self._redelivery = signals.redelivered()
        self._redelivery.__enter__()
        try:
            self._ledger = self._create()
        except BaseException:
            self._redelivery.__exit__(None, None, None)
            raise
        try:
            self._crash = CrashRecord.start(self.ledger.root)
            self._guard = guarded_exit(self._process_exit)
            self._guard.__enter__()
        except BaseException as e:  # an interrupt between the two: the ledger exists, so it ends
            if self._crash is not None:
                self._crash.stop()
            try:
                self._close(e)
            finally:
                self._redelivery.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self._end(error)
        finally:
            assert self._redelivery is not None
            self._redelivery.__exit__(None, None, None)

    def _end(self, error: BaseException | None) -> None:
        stop: KeyboardInterrupt | None = None
        try:
            try:
                if self._guard is not None:
                    self._guard.__exit__(None, None, None)
            finally:
                if self._crash is not None:
                    self._crash.stop()
                stop = signals.pending_interrupt() if not isinstance(error, KeyboardInterrupt) else None
                if stop is None:
                    self._close(error)
        finally:
            reopen_std_streams()  # the user's code may have closed them: what reports the run's end needs them
            _restore_cwd(self._cwd)  # and changed the working folder: paths as typed hold again
        if stop is not None:  # a signal the body never saw: something on its way turned it into another error
            signals.seen()
            self.interrupt(stop, override=True)
            raise stop from error

    def _close(self, error: BaseException | None) -> None:
        """End what the body left open: interrupted, failed by what escaped it, or ok."""
        ledger = self.ledger
        if isinstance(error, KeyboardInterrupt):
            signals.seen()
            self.interrupt(error)
        elif error is not None and ledger.run_index.status == "running":  # escaped the body: a bug, or an exit
            if not isinstance(error, SystemExit) or error.code not in (0, None):  # sys.exit(0) ends it ok
                ledger.fail(f"{type(error).__name__}: {error}", {"type": type(error).__name__})
            ledger.finish("failed" if ledger.run_index.status == "failed" else None)
        elif ledger.run_index.status == "running":
            ledger.finish()

    def _process_exit(self, code: int, where: str) -> int:
        """``os._exit(code)`` called at ``where`` while this run was open: close it and say so."""
        ledger = self.ledger
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
            sys.stderr.write(printable(f"error: {message}\nhint: the run is closed: {ledger.shown}") + "\n")
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

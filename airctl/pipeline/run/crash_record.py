"""A native crash while a run is open leaves every thread's Python stack in the ledger.

A segfault in a native library, or torch's C++ aborting (``terminate called after throwing an
instance of 'python_error'``: an interrupt raised in Python code that C++ called where an exception
cannot pass, docs/reliability.md), kills the process where no Python code runs again: nothing closes
the run, and its ledger stays ``running``, which readers show as ``died``
(:mod:`airctl.ledger.liveness`). What the user needs then is where the process was. While a run is
open, :mod:`faulthandler` (C code, safe inside a signal handler) writes every thread's Python stack
into ``crash.txt`` in the ledger on SIGSEGV, SIGABRT, SIGBUS, SIGFPE and SIGILL, then lets the signal
kill the process as before; readers quote its first frame. The empty file of a run that did not
crash is removed when the run ends.

faulthandler writes to one file. A process that had it enabled already (``python -X faulthandler``,
``PYTHONFAULTHANDLER``, pytest) gets it back when the run ends, on the standard error, the only
file known for it.
"""

from __future__ import annotations

import contextlib
import faulthandler
import sys
from pathlib import Path
from typing import IO

from airctl.ledger.liveness import CRASH_FILE


class CrashRecord:
    """faulthandler aimed at ``<ledger>/crash.txt`` from :meth:`start` to :meth:`stop`."""

    def __init__(self, path: Path, file: IO[str] | None, was_enabled: bool) -> None:
        self.path, self._file, self._was_enabled = path, file, was_enabled

    @classmethod
    def start(cls, root: Path) -> CrashRecord:
        """Aim faulthandler at ``root``'s crash file; a ledger that cannot hold it records nothing."""
        path = Path(root) / CRASH_FILE
        was_enabled = faulthandler.is_enabled()
        try:
            file = open(path, "x", encoding="utf-8")  # noqa: SIM115 - open for the whole run
        except OSError:  # a full disk, a folder not writable: the run goes on without it
            return cls(path, None, was_enabled)
        faulthandler.enable(file=file, all_threads=True)
        return cls(path, file, was_enabled)

    def stop(self) -> None:
        """Give faulthandler back as it was; remove the file when nothing was written."""
        if self._file is None:
            return
        faulthandler.disable()
        if self._was_enabled:
            with contextlib.suppress(AttributeError, OSError, ValueError):  # no real stderr: left off
                faulthandler.enable(file=sys.__stderr__, all_threads=True)
        with contextlib.suppress(OSError):
            self._file.close()
            if self.path.stat().st_size == 0:
                self.path.unlink()
        self._file = None

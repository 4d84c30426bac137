"""Tee TorchAir's log into the ledger's ``log.txt`` without changing what the script sees.

``airctl compile`` owns its logging and lowers the ``torchair`` logger to DEBUG for the ledger
(:mod:`airctl.pipeline.run.logs`). ``airctl run`` runs a script that sets TorchAir's log level
itself (``logger.setLevel(logging.DEBUG)``, ``TORCH_COMPILE_DEBUG=1``) and expects TorchAir's
stdout handler to print exactly that, as on an NPU. So here no level is touched: one file
handler is added to the ``torchair`` logger, using TorchAir's own formatter, and ``log.txt``
gets the same lines the terminal gets, whatever level the script chose when. airctl's own
notes (``airctl:`` lines) go to the same file.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

from airctl.ledger.log_file import LedgerLogHandler

FALLBACK_FORMAT = "[%(levelname)s] %(name)s:%(asctime)s [%(filename)s:%(lineno)d] %(message)s"


class RunLog:
    """The open ``log.txt`` of one run."""

    def __init__(self, handler: LedgerLogHandler) -> None:
        self.handler = handler

    def note(self, message: str) -> None:
        """An airctl line in log.txt (what airctl did to the run, e.g. run_eagerly under sim)."""
        self.handler.acquire()
        try:
            self.handler.stream.write(f"[airctl] {message}\n")
            self.handler.flush()
        except OSError as e:  # a full disk: the log stops, the run goes on (LedgerLogHandler)
            self.handler.failed = self.handler.failed or e
        finally:
            self.handler.release()


@contextlib.contextmanager
def tee_torchair_log(path: Path) -> Iterator[RunLog]:
    handler = LedgerLogHandler(path)
    handler.setLevel(logging.NOTSET)
    # Only attach to a logger that exists: creating "torchair" before TorchAir does would give it
    # a plain Logger instead of TorchAir's own logger class (which has .event()).
    targets = [logging.getLogger(n) for n in ("torchair",) if n in logging.root.manager.loggerDict]
    formatter = next((h.formatter for lg in targets for h in lg.handlers if h.formatter is not None), None)
    handler.setFormatter(formatter or logging.Formatter(FALLBACK_FORMAT))
    for lg in targets:
        lg.addHandler(handler)
    try:
        yield RunLog(handler)
    finally:
        for lg in targets:
            lg.removeHandler(handler)
        handler.close()

"""The ledger's ``log.txt`` handler: a FileHandler that a full disk cannot turn into tracebacks.

``logging.FileHandler`` reports a failed write by printing a traceback to stderr, once per log
record — thousands of them when the disk fills up during a compile. This handler stops writing at
the first failure, keeps the error (``failed``) for the run to report, and stays quiet.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path


class LedgerLogHandler(logging.FileHandler):
    def __init__(self, path: Path | str) -> None:
        super().__init__(path, encoding="utf-8")
        self.failed: BaseException | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.failed is None:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        if self.failed is None:
            self.failed = sys.exc_info()[1]

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as e:
            self.failed = self.failed or e

    def close(self) -> None:
        try:
            super().close()
        except OSError as e:  # the last buffered lines could not be written: the run's error says why
            self.failed = self.failed or e

"""The ledger's ``log.txt`` handler: a FileHandler that a full disk cannot turn into tracebacks.

``logging.FileHandler`` reports a failed write by printing a traceback to stderr, once per log
record — thousands of them when the disk fills up during a compile. This handler stops writing at
the first failure, keeps the error (``failed``) for the run to report, and stays quiet.

It also does not flush after every record, as FileHandler does: a large compile logs tens of
thousands of DEBUG lines, and a write system call for each cost it about 1%. Lines reach the
file when the buffer fills, at once for a WARNING or worse, at least every ``FLUSH_EVERY_S``
seconds, and when the run ends (also a failed or interrupted one: the handler is closed then).

A record another handler has already formatted is not evaluated again: its message is reused.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

FLUSH_EVERY_S = 1.0


class LedgerLogHandler(logging.FileHandler):
    def __init__(self, path: Path | str) -> None:
        super().__init__(path, encoding="utf-8")
        self.failed: BaseException | None = None
        self._flushed_at = time.monotonic()

    def emit(self, record: logging.LogRecord) -> None:
        if self.failed is not None:
            return
        if self.stream is None:  # closed: FileHandler's own way (reopens, or drops the line)
            super().emit(record)
            return
        try:
            self.stream.write(self.format(record) + self.terminator)
            if record.levelno >= logging.WARNING or time.monotonic() - self._flushed_at >= FLUSH_EVERY_S:
                self.flush()
        except RecursionError:
            raise
        except Exception:  # noqa: BLE001 - logging's contract: handleError decides
            self.handleError(record)

    def format(self, record: logging.LogRecord) -> str:
        """The record formatted, reusing the message a handler before this one computed: a message
        argument may be lazy and costly, or count its own evaluations (TorchAir's ``LazyMessage``)."""
        if "message" not in record.__dict__:
            return super().format(record)
        message = record.__dict__["message"]
        record.getMessage = lambda: message  # type: ignore[method-assign]
        try:
            return super().format(record)
        finally:
            del record.getMessage

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        if self.failed is None:
            self.failed = sys.exc_info()[1]

    def flush(self) -> None:
        self._flushed_at = time.monotonic()
        try:
            super().flush()
        except OSError as e:
            self.failed = self.failed or e

    def close(self) -> None:
        try:
            super().close()
        except OSError as e:  # the last buffered lines could not be written: the run's error says why
            self.failed = self.failed or e

"""The ledger's log.txt handler: buffered, yet a warning, the passing of time or the run's end puts
every line on disk (what a user reads while a long compile runs, or after it failed)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from airctl.ledger import log_file
from airctl.ledger.log_file import LedgerLogHandler


@pytest.fixture
def logger(tmp_path: Path):
    handler = LedgerLogHandler(tmp_path / "log.txt")
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    lg = logging.getLogger("airctl.test.log_file")
    lg.setLevel(logging.DEBUG)
    lg.propagate = False
    lg.addHandler(handler)
    yield lg, handler, tmp_path / "log.txt"
    lg.removeHandler(handler)
    handler.close()


def test_a_warning_brings_every_earlier_line_to_disk_at_once(logger) -> None:
    lg, _handler, path = logger
    for i in range(3):
        lg.debug("line %d", i)
    lg.warning("something to read now")
    assert path.read_text().splitlines() == ["DEBUG line 0", "DEBUG line 1", "DEBUG line 2",
                                             "WARNING something to read now"]


def test_lines_reach_the_file_at_least_every_interval(logger, monkeypatch) -> None:
    lg, _handler, path = logger
    monkeypatch.setattr(log_file, "FLUSH_EVERY_S", 0.0)
    lg.debug("a pass-diff table")
    assert path.read_text() == "DEBUG a pass-diff table\n"


def test_closing_writes_what_was_buffered(logger) -> None:
    lg, handler, path = logger
    lg.debug("the last line before a crash")
    handler.close()
    assert path.read_text() == "DEBUG the last line before a crash\n"


def test_a_message_another_handler_formatted_is_not_evaluated_again(logger) -> None:
    _, handler, _ = logger
    calls = []

    class Lazy:  # TorchAir's LazyMessage: evaluated when a handler formats the record
        def __str__(self) -> str:
            calls.append(1)
            return "computed"

    record = logging.LogRecord("torchair", logging.DEBUG, __file__, 1, "value: %s", (Lazy(),), None)
    assert handler.format(record) == "DEBUG value: computed"  # first handler: evaluates once
    assert handler.format(record) == "DEBUG value: computed"  # a later handler reuses the message
    assert len(calls) == 1
    assert "getMessage" not in record.__dict__

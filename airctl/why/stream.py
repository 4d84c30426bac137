"""A run's ``airctl why`` table read from its ``index.json`` one event at a time, in bounded memory.

A run that recompiled 200k times has an index of tens of MB; read whole and typed, then turned
into rows and one JSON document, it took about 1 GB. Here the index is read as a stream of JSON
values (:class:`_Values`, on :meth:`json.JSONDecoder.raw_decode`): everything but ``events`` is read
as every reader reads it (checked and typed: :class:`~airctl.ledger.index.RunIndex`), and the
events are read twice, each one checked as a :class:`~airctl.ledger.index.WhyEvent` and dropped: once
to count them (:class:`airctl.why.table.Tally`), once to make the rows as they are shown or written.
Memory is one event, the rest of the index and a read buffer (:data:`CHUNK`), whatever the number
of events. The events are in the order they happened in the file (the ledger's writer appends them
so; ``airctl import`` writes them in log order).
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from airctl.errors import LedgerError
from airctl.ledger.index import VERSION, RunIndex, WhyEvent
from airctl.ledger.index_load import MAX_BYTES, warn_if_newer
from airctl.ledger.liveness import seen_alive
from airctl.ledger.record import INDEX
from airctl.safe_files import open_regular, too_large
from airctl.why.table import Tally, WhyTable, table_of

CHUNK = 1 << 20  # bytes read at a time
_SPACE = re.compile(r"[ \t\n\r]*")
STREAMED = "events"


class _Values:
    """JSON values read one at a time from a binary file, keeping only what is not yet read."""

    def __init__(self, f: BinaryIO, path: Path) -> None:
        self.f, self.path = f, path
        self.text, self.pos, self.done = "", 0, False
        self.utf8 = codecs.getincrementaldecoder("utf-8")()
        self.decoder = json.JSONDecoder()

    def corrupt(self, why: str) -> LedgerError:
        return LedgerError(f"corrupt {INDEX}: {why}", file=str(self.path))

    def _more(self, size: int) -> bool:
        if self.done:
            return False
        data = self.f.read(size)
        try:
            new = self.utf8.decode(data, final=not data)
        except UnicodeDecodeError as e:
            raise self.corrupt(f"not UTF-8 ({e.reason})") from None
        self.text, self.pos, self.done = self.text[self.pos:] + new, 0, not data
        return True

    def peek(self) -> str:
        """The next character that is not white space ("" at the end)."""
        while True:
            self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text) or not self._more(CHUNK):
                return self.text[self.pos:self.pos + 1]

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise self.corrupt(f"expected {char!r}, found {self.peek() or 'the end'!r}")
        self.pos += 1

    def value(self) -> Any:
        """The next JSON value (read on until it is whole: a number cut by the buffer's end included)."""
        self.peek()
        size = CHUNK
        while True:
            try:
                value, end = self.decoder.raw_decode(self.text, self.pos)
                if end < len(self.text) or self.done:
                    self.pos = end
                    return value
            except json.JSONDecodeError as e:
                if self.done:
                    raise self.corrupt(e.msg) from None
            except RecursionError:
                raise self.corrupt("nested too deeply to be a run index") from None
            self._more(size)
            size *= 2  # a long value: fewer re-reads of its start

    def items(self) -> Iterator[Any]:
        """The elements of the array that starts here, one at a time."""
        self.take("[")
        if self.peek() == "]":
            self.pos += 1
            return
        position = 0
        while True:
            yield self.value()
            position += 1
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() == "]":
                self.pos += 1
                return
            else:
                raise self.corrupt(f"expected ',' or ']' after element {position} of an array")


def _walk(root: Path) -> Generator[dict[str, Any], None, dict[str, Any]]:
    """Each event of the index at ``root``, checked, in file order; then (the generator's value) the
    top-level object without its events."""
    path = root / INDEX
    try:
        with open_regular(path, hint="index.json is written by airctl; restore it, or list the runs with "
                                     "`airctl runs`") as f:
            if os.fstat(f.fileno()).st_size > MAX_BYTES:
                raise too_large(path, MAX_BYTES, f"run index ({INDEX})")
            values = _Values(f, path)
            head: dict[str, Any] = {}
            values.take("{")
            while values.peek() != "}":
                key = values.value()
                if not isinstance(key, str):
                    raise values.corrupt("a key that is not a string")
                values.take(":")
                if key == STREAMED and values.peek() == "[":
                    for i, event in enumerate(values.items()):
                        yield WhyEvent.from_json(event, file=str(path), where=f"events[{i}]").to_json()
                else:
                    head[key] = values.value()
                if values.peek() != ",":
                    break
                values.pos += 1
            values.take("}")
            if values.peek():
                raise values.corrupt("data after the index")
            return head
    except OSError as e:
        raise LedgerError(f"cannot read {INDEX}: {e.strerror or e}", file=str(path)) from e


def why_streamed(root: Path) -> tuple[WhyTable, RunIndex]:
    """The ``airctl why`` table of the ledger at ``root`` (its rows made on each reading, from the file),
    and the ledger's index without its events."""
    walk = _walk(root)
    counting = Tally()
    while True:  # the first reading: what the summary counts, and which recompiles a limit stopped
        try:
            counting.add(next(walk))
        except StopIteration as stop:
            head = stop.value
            break
    path = str(root / INDEX)
    warn_if_newer(head, VERSION, path)
    index = RunIndex.read(seen_alive(head, root), file=path)
    return table_of(index, lambda: _walk(root), counting), index

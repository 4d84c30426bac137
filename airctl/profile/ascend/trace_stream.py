"""Chrome trace JSON (``trace_view.json``) read one event at a time, in bounded memory.

torch_npu's ``trace_view.json`` of a long run is gigabytes: ``json.loads`` of an 888 MB one took
4.1 GB and ran out of memory under a 3 GB limit. This reader never holds more than one chunk of
text plus the event being parsed: it walks the top level by hand (``[`` events ``]``, or an
object whose ``traceEvents`` key holds that list, other keys skipped) and parses each event with
the C JSON decoder (``JSONDecoder.raw_decode``) where it starts in the buffer. An event cut by the
chunk's end is parsed again once the next chunk is in. The trailing ``,]`` torch_npu leaves when
the device timeline is empty is tolerated; anything else that is not JSON is a
:class:`ProfileReadError` with its line.

>>> import tempfile, os; p = Path(tempfile.mkdtemp()) / "t.json"
>>> _ = p.write_text('{"displayTimeUnit": "ns", "traceEvents": [{"ph": "X"}, 3, {"ph": "M"},]}')
>>> [e["ph"] for e in iter_events(p)]
['X', 'M']
"""

from __future__ import annotations

import codecs
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from airctl.profile.ascend.model import ProfileReadError
from airctl.safe_files import open_regular

CHUNK = 1 << 20  # bytes read at a time (the window holds about one chunk of text)
LOOKAHEAD = 64  # a value parsed closer than this to the window's end is parsed again with more text
MAX_VALUE = 256 << 20  # one event (or one skipped top-level value) may not be larger
_BLANK = re.compile(r"[ \t\n\r]*")
_GAP = re.compile(r"[ \t\n\r]*,[ \t\n\r]*(?=[^ \t\n\r\]])")  # between two events: a comma and blanks
_DECODER = json.JSONDecoder()
log = logging.getLogger("airctl")
Progress = Callable[[int, int], None]  # (bytes read, file size)
HINT = "the profiler may have been stopped while writing; profile again"


class _Scanner:
    """A window of decoded text over the file, and a position in it."""

    def __init__(self, f: BinaryIO, path: Path, progress: Progress | None) -> None:
        self.f, self.path, self.progress = f, path, progress
        self.size = os.fstat(f.fileno()).st_size
        self.read_bytes = 0
        self.decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self.buf, self.pos, self.lines_before, self.eof = "", 0, 0, False

    def fill(self) -> bool:
        """More text at the end of the window; False at the end of the file."""
        if self.eof:
            return False
        if self.pos:  # drop what was consumed (counting its lines, for errors)
            self.lines_before += self.buf.count("\n", 0, self.pos)
            self.buf, self.pos = self.buf[self.pos:], 0
        data = self.f.read(CHUNK)
        self.read_bytes += len(data)
        if self.progress is not None:
            self.progress(self.read_bytes, self.size)
        self.eof = not data
        self.buf += self.decode(data, final=self.eof)
        return not self.eof

    def peek(self) -> str:
        """The next character that is not a blank ('' at the end of the file)."""
        while True:
            self.pos = _BLANK.match(self.buf, self.pos).end()
            if self.pos < len(self.buf) or not self.fill():
                return self.buf[self.pos:self.pos + 1]

    def value(self) -> Any:
        """The JSON value starting at the position (read on until it is complete)."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                if len(self.buf) - self.pos > MAX_VALUE:
                    raise self.error(f"a value over {MAX_VALUE >> 20} MB") from None
                before = self.pos
                if self.fill():
                    continue
                at = e.pos - (before - self.pos)  # the window may have lost what preceded the value
                raise self.error(f"not valid JSON: {e.msg}", at) from None
            except RecursionError:
                raise ProfileReadError(f"{self.path.name} is nested too deeply to be a Chrome trace",
                                       file=str(self.path),
                                       hint="expected a flat list of trace events as torch_npu writes it") from None
            if len(self.buf) - end < LOOKAHEAD and not self.eof:  # "1" of "1.5" cut by the window's end
                before = self.pos
                if self.fill():
                    continue  # parse it again, with more text
                end -= before - self.pos  # the end of the file: the window lost what preceded the value
            self.pos = end
            return value

    def expect(self, char: str) -> None:
        if self.peek() != char:
            found = self.buf[self.pos:self.pos + 1]
            raise self.error(f"expected {char!r} but found {found!r}" if found else "the file ends early")
        self.pos += 1

    def error(self, message: str, at: int | None = None) -> ProfileReadError:
        at = self.pos if at is None else at
        line = self.lines_before + self.buf.count("\n", 0, at) + 1
        return ProfileReadError(f"{self.path.name} is {message}" if message.startswith("not valid") else
                                f"{self.path.name}: {message}", file=str(self.path), line=line, hint=HINT)


def iter_events(path: Path, progress: Progress | None = None) -> Iterator[dict[str, Any]]:
    """Every trace event (a JSON object) of ``path``, in file order; entries that are not objects are skipped."""
    with open_regular(path, error=ProfileReadError) as f:
        scan = _Scanner(f, path, progress)
        first = scan.peek()
        if first == "[":
            scan.pos += 1
            yield from _items(scan)
            _after_end(scan)
            return
        found = False
        if first == "{":
            scan.pos += 1
            while scan.peek() != "}":
                key = scan.value()
                scan.expect(":")
                if key == "traceEvents" and scan.peek() == "[":
                    scan.pos += 1
                    found = True
                    yield from _items(scan)
                else:
                    scan.value()  # displayTimeUnit, otherData, ...: not used
                if scan.peek() == ",":
                    scan.pos += 1
                elif scan.peek() != "}":
                    scan.expect("}")
        if not found:  # not an object, or one without a list of events
            raise ProfileReadError(f"{path.name} is neither a list of trace events nor an object with 'traceEvents'",
                                   file=str(path), hint="expected Chrome trace JSON as torch_npu writes it")
        scan.pos += 1
        _after_end(scan)


def _after_end(scan: _Scanner) -> None:
    """A warning naming ``file:line`` when anything but blanks follows the trace's JSON (a second
    trace appended, a file still being written): the events read are kept, the rest is not read."""
    if scan.peek():
        line = scan.lines_before + scan.buf.count("\n", 0, scan.pos) + 1
        log.warning("%s:%d: warning: more data after the end of the trace's JSON (%r...); it is not read",
                    scan.path, line, scan.buf[scan.pos:scan.pos + 20])


def _items(scan: _Scanner) -> Iterator[dict[str, Any]]:
    """The elements of the list whose ``[`` was just passed, up to and past its ``]``. The inner loop
    parses the events lying whole in the window without a call per character; the careful path
    (:meth:`_Scanner.value`) takes over at the window's end and for anything unusual."""
    decode, gap = _DECODER.raw_decode, _GAP.match
    while True:
        buf, pos = scan.buf, scan.pos
        room = len(buf) - LOOKAHEAD  # an event near the end may be cut: leave it to the careful path
        while pos < room:
            if buf[pos] == "]":
                scan.pos = pos + 1
                return
            try:
                item, end = decode(buf, pos)
            except (json.JSONDecodeError, RecursionError):
                break
            if end >= room:
                break
            m = gap(buf, end)
            if m is None:
                break
            pos = m.end()
            if isinstance(item, dict):
                scan.pos = pos
                yield item
        scan.pos = pos
        nxt = scan.peek()
        if nxt == "]":
            scan.pos += 1
            return
        item = scan.value()
        if isinstance(item, dict):
            yield item
        nxt = scan.peek()
        if nxt == ",":
            scan.pos += 1
            if scan.peek() == "]":  # torch_npu's trailing ",]"
                scan.pos += 1
                return
        elif nxt == "]":
            scan.pos += 1
            return
        else:
            scan.expect("]")

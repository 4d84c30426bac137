"""A streaming tokenizer for protobuf-text-like graph dumps (TorchAir's ``.pbtxt`` and ``.txt``).

Dumps come from other machines and can be huge or hostile: a 200 MB quoted attribute, a million
nodes. Reading the whole file into one string and running a regex over it costs many times the
file's size (the regex engine keeps a mark per repetition). :func:`scan` reads the file in fixed
chunks and yields one token at a time — words, symbols, string literals with their line — so a
reader can build the graph node by node. A string literal longer than ``max_string`` bytes is
kept only up to that length (``Token.elided`` counts the rest, which is skipped, never stored):
memory stays bounded by the chunk size, the kept prefixes, and the graph being built.

Strings cannot span lines (protobuf text escapes newlines), words are ``[-+]?[A-Za-z0-9_.]+``,
``#`` starts a comment, and the symbols are ``{}:<>[],;``. Every error is a
:class:`~airctl.errors.GraphReadError` with the file and line.

>>> import io
>>> [(t.kind, t.text, t.line) for t in scan(io.BytesIO(b'node {\\n  name: "a\\\\"b"\\n}\\n'), "x")]
[('word', 'node', 1), ('sym', '{', 1), ('word', 'name', 2), ('sym', ':', 2), ('str', 'a\\\\"b', 2), ('sym', '}', 3)]
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

from airctl.errors import GraphReadError

CHUNK = 1 << 20
MAX_STRING = 1 << 20  # bytes of one string literal kept; the rest is skipped and counted
SYMBOLS = b"{}:<>[],;"
_WS = re.compile(rb"[ \t\r\f\v]+")
_WORD = re.compile(rb"[-+]?[A-Za-z0-9_.]+")
_STOP = {q: re.compile(rb"[\\\n" + bytes([q]) + rb"]") for q in b"'\""}
# one match per token on the common path; a string literal longer than the bounded repetition (or cut by
# the chunk's end) falls back to the step-by-step scan, so the regex never holds more than 4 KB of marks
_TOKEN = re.compile(
    rb"""(?P<space>[ \t\r\n\f\v]+)|(?P<word>[-+]?[A-Za-z0-9_.]+)|(?P<sym>[{}:<>\[\],;])
    |(?P<str>"(?:[^"\\\n]|\\.){0,4096}"|'(?:[^'\\\n]|\\.){0,4096}')""", re.VERBOSE)


class Token(NamedTuple):
    kind: str  # word | sym | str
    text: str  # a word or symbol; a string's escaped body (UTF-8, undecodable bytes as surrogates)
    line: int
    quote: str = ""  # the quote of a string literal
    elided: int = 0  # bytes of a long string literal that were skipped

    def raw(self) -> bytes:
        """A string token's escaped body as bytes (as in the file)."""
        return self.text.encode("utf-8", "surrogateescape")


class _Scanner:
    def __init__(self, stream: BinaryIO, origin: str, hint: str | None, max_string: int, chunk: int,
                 layout: bool = False) -> None:
        self.stream, self.origin, self.hint, self.layout = stream, origin, hint, layout
        self.max_string, self.chunk = max_string, chunk
        self.buf = b""
        self.pos = 0
        self.line = 1
        self.eof = False

    def error(self, message: str, line: int | None = None) -> GraphReadError:
        return GraphReadError(message, file=self.origin, line=line or self.line, hint=self.hint)

    def more(self) -> bool:
        """Append the next chunk (dropping what was consumed); False at the end of the file."""
        if self.eof:
            return False
        data = self.stream.read(self.chunk)
        if not data:
            self.eof = True
            return False
        self.buf = self.buf[self.pos:] + data
        self.pos = 0
        return True

    def tokens(self) -> Iterator[Token]:
        match = _TOKEN.match
        while True:
            if self.pos >= len(self.buf) and not self.more():
                return
            m = match(self.buf, self.pos)
            if m is not None and (m.end() < len(self.buf) or self.eof):
                kind = m.lastgroup
                text = m.group()
                self.pos = m.end()
                if kind == "space":
                    if self.layout:
                        yield Token("space", text.decode("ascii"), self.line)
                    self.line += text.count(b"\n")
                elif kind == "str":
                    yield Token("str", text[1:-1].decode("utf-8", "surrogateescape"), self.line, chr(text[0]))
                else:
                    yield Token(kind, text.decode("ascii"), self.line)  # type: ignore[arg-type]
                continue
            if m is not None and m.lastgroup != "str" and self.more():  # a token cut by the chunk's end
                continue
            c = self.buf[self.pos]
            if c == 0x0A:
                self.line += 1
                self.pos += 1
                if self.layout:
                    yield Token("space", "\n", self.line - 1)
            elif c in b" \t\r\f\v":
                start = self.pos
                self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
                if self.layout:
                    yield Token("space", self.buf[start:self.pos].decode("ascii"), self.line)
            elif c == 0x23:  # '#': a comment to the end of the line
                start_line, start = self.line, self.pos
                self.skip_line()
                if self.layout and self.pos - start < self.max_string:
                    yield Token("space", self.buf[start:self.pos].decode("utf-8", "surrogateescape"), start_line)
            elif c in b"'\"":
                yield self.string(c)
            elif c in SYMBOLS:
                self.pos += 1
                yield Token("sym", chr(c), self.line)
            elif c == 0:
                raise GraphReadError("binary data (NUL byte)", file=self.origin, line=self.line,
                                     hint="graph dumps are text; a binary GE model (.pb/.om) cannot be read, dump "
                                          "it as txt or pbtxt")
            else:
                yield self.word()

    def skip_line(self) -> None:
        while True:
            end = self.buf.find(b"\n", self.pos)
            if end >= 0:
                self.pos = end
                return
            self.pos = len(self.buf)
            if not self.more():
                return

    def word(self) -> Token:
        m = _WORD.match(self.buf, self.pos)
        while m is not None and m.end() == len(self.buf) and self.more():  # a word cut by the chunk's end
            m = _WORD.match(self.buf, self.pos)
        if m is None:
            ch = self.buf[self.pos:self.pos + 4].decode("utf-8", "replace")[:1]
            raise self.error(f"unexpected character {ch!r}")
        self.pos = m.end()
        return Token("word", m.group().decode("ascii"), self.line)

    def string(self, quote: int) -> Token:
        line, stop = self.line, _STOP[quote]
        self.pos += 1
        kept = bytearray()
        elided = 0

        def keep(segment: bytes) -> None:
            nonlocal elided
            room = self.max_string - len(kept)
            if room > 0:
                kept.extend(segment[:room])
            elided += max(0, len(segment) - max(room, 0))

        while True:
            m = stop.search(self.buf, self.pos)
            if m is None:
                keep(self.buf[self.pos:])
                self.pos = len(self.buf)
                if not self.more():
                    raise self.error("unterminated string (truncated file?)", line)
                continue
            keep(self.buf[self.pos:m.start()])
            hit = self.buf[m.start()]
            if hit == 0x0A:
                raise self.error("unterminated string (a string cannot span lines)", line)
            if hit == quote:
                self.pos = m.end()
                break
            if m.start() + 1 >= len(self.buf):  # a backslash at the chunk's end: read on, then look again
                self.pos = m.start()
                if not self.more():
                    raise self.error("unterminated string (truncated file?)", line)
                continue
            keep(self.buf[m.start():m.start() + 2])
            self.pos = m.start() + 2
        if elided:  # never end a kept prefix inside an escape sequence
            cut = kept.rfind(b"\\", max(0, len(kept) - 4))
            if cut >= 0:
                elided += len(kept) - cut
                del kept[cut:]
        return Token("str", kept.decode("utf-8", "surrogateescape"), line, chr(quote), elided)


class Scan:
    """The tokens of a protobuf-text-like file (iterate it); ``line`` is where the scan is (at the end of
    the file: its last line, for "unexpected end of file" errors)."""

    def __init__(self, stream: BinaryIO, origin: str, *, hint: str | None = None, max_string: int = MAX_STRING,
                 chunk: int = CHUNK, layout: bool = False) -> None:
        self._scanner = _Scanner(stream, origin, hint, max_string, chunk, layout)
        self._tokens = self._scanner.tokens()

    def __iter__(self) -> Iterator[Token]:
        return self._tokens

    def __next__(self) -> Token:
        return next(self._tokens)

    @property
    def line(self) -> int:
        return self._scanner.line


def scan(stream: BinaryIO, origin: str, *, hint: str | None = None, max_string: int = MAX_STRING,
         chunk: int = CHUNK, layout: bool = False) -> Scan:
    """The tokens of a protobuf-text-like file, read ``chunk`` bytes at a time (see the module doc).
    ``layout``: also whitespace, newlines and comments, as ``space`` tokens (to rewrite the file)."""
    return Scan(stream, origin, hint=hint, max_string=max_string, chunk=chunk, layout=layout)


def shortened(stream: BinaryIO, origin: str, *, hint: str | None = None,
              max_string: int = MAX_STRING) -> tuple[str, list[tuple[int, int]]]:
    """The file's text with every string literal longer than ``max_string`` cut short (and marked):
    the same lines and layout, so a whole-text parser's errors still point at the right line.
    Returns the text and the (line, bytes skipped) of each cut literal."""
    parts: list[str] = []
    cut: list[tuple[int, int]] = []
    for tok in scan(stream, origin, hint=hint, max_string=max_string, layout=True):
        if tok.kind != "str":
            parts.append(tok.text)
            continue
        body = tok.text
        if tok.elided:
            cut.append((tok.line, tok.elided))
            body += elision_note(tok.elided).replace("\\", "\\\\").replace(tok.quote, "\\" + tok.quote)
        parts.append(tok.quote + body + tok.quote)
    return "".join(parts), cut


def elision_note(elided: int) -> str:
    """What replaces the skipped part of a long string (it stays visible in dumps and diffs)."""
    return f"...<airctl: {elided} more bytes not read>"

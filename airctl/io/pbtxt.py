"""TorchAir's ``.pbtxt`` graph dumps: TensorFlow-GraphDef-style text (reference/torchair.md §5.1, §5.4).

This is *not* protobuf text of the GE ``GraphDef``: every node is ``node { name op input* attr* }``
with 4-space indentation, control inputs are ``^X``, every GE attribute is a string
``s: '<protobuf text of the AttrDef>'`` and each input/output descriptor is a pseudo-attribute
``[i]<name>`` / ``[o]<name>`` holding its ``TensorDescriptor`` text. Graph attributes are absent.
An op GE's build put on a stream (``stream_id``, airctl's ``ge-build`` stage) has the NodeDef field
``device: "stream:<id>"``, which TensorBoard can colour by.

Reading tokenizes the outer structure here (so every error has a line), turns each node back
into a GE ``OpDef`` and maps it like a ``.txt`` dump, so both dumps of one graph give equal
nodes. Writing produces the same layout TorchAir writes, so Netron and TensorBoard open it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from google.protobuf import text_format

from airctl.errors import GraphReadError
from airctl.graph.model import Graph
from airctl.io.ge_build import apply_header, apply_overrides, header_line, read_header, to_graph_def
from airctl.io.ge_proto import graph_from_ge_proto
from airctl.io.ge_schema import message_class
from airctl.io.text_scan import Scan, Token, elision_note, scan

HINT = "expected a TorchAir .pbtxt dump: `node { name: ... op: ... }` blocks (config.debug.graph_dump.type = 'pbtxt')"
INDENT = "    "
STREAM_DEVICE = "stream:"  # NodeDef's device field carries the stream GE's build gave an op (ge-build stage)
MAX_DEPTH = 64

_ESCAPE = re.compile(rb"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|(.))", re.DOTALL)
_SIMPLE = {b"n": b"\n", b"t": b"\t", b"r": b"\r", b"a": b"\a", b"b": b"\b", b"f": b"\f", b"v": b"\v",
           b"\\": b"\\", b"'": b"'", b'"': b'"', b"?": b"?"}


@dataclass
class Field:
    """One ``name: value`` or ``name { ... }`` entry; ``value`` is bytes, a word, or sub-fields."""

    name: str
    value: bytes | str | list[Field]
    line: int


class _Reader:
    """Recursive descent over :func:`~airctl.io.text_scan.scan`'s tokens, one token of lookahead."""

    def __init__(self, tokens: Scan, origin: str) -> None:
        self.origin = origin
        self.tokens = tokens
        self.ahead: Token | None = None
        self.elided: list[tuple[int, int]] = []  # (line, bytes) of long strings cut short

    def error(self, message: str, line: int) -> GraphReadError:
        return GraphReadError(message, file=self.origin, line=line, hint=HINT)

    @property
    def last_line(self) -> int:
        return self.tokens.line

    def peek(self) -> Token | None:
        if self.ahead is None:
            self.ahead = next(self.tokens, None)
        return self.ahead

    def take(self, what: str) -> Token:
        tok = self.peek()
        if tok is None:
            raise self.error(f"unexpected end of file, expected {what} (truncated file?)", self.last_line)
        self.ahead = None
        return tok

    def entries(self) -> Iterator[Field]:
        """The top-level fields, one at a time (a dump's nodes are read and dropped one by one)."""
        while self.peek() is not None:
            yield self.field(0)

    def field(self, depth: int) -> Field:
        tok = self.take("a field name")
        if tok.kind != "word":
            raise self.error(f"expected a field name, got {tok.text!r}", tok.line)
        entry = Field(tok.text, self.value(depth), tok.line)
        nxt = self.peek()
        if nxt is not None and nxt.kind == "sym" and nxt.text in ",;":
            self.ahead = None
        return entry

    def fields(self, close: str, depth: int) -> list[Field]:
        if depth > MAX_DEPTH:
            raise self.error("nesting too deep", self.last_line)
        out: list[Field] = []
        while True:
            tok = self.peek()
            if tok is None:
                raise self.error(f"unexpected end of file, expected {close!r} (truncated file?)", self.last_line)
            if tok.kind == "sym" and tok.text == close:
                self.ahead = None
                return out
            out.append(self.field(depth))

    def value(self, depth: int) -> bytes | str | list[Field]:
        tok = self.take("a value")
        if tok.kind == "sym" and tok.text == ":":
            tok = self.take("a value")
        if tok.kind == "sym" and tok.text in "{<":
            return self.fields("}" if tok.text == "{" else ">", depth + 1)
        if tok.kind == "str":
            parts = [self.string(tok)]
            while (nxt := self.peek()) is not None and nxt.kind == "str":  # "a" "b" concatenates
                self.ahead = None
                parts.append(self.string(nxt))
            return b"".join(parts)
        if tok.kind == "word":
            return tok.text
        raise self.error(f"expected a value, got {tok.text!r}", tok.line)

    def string(self, tok: Token) -> bytes:
        data = unescape(tok.raw(), self, tok.line)
        if tok.elided:
            self.elided.append((tok.line, tok.elided))
            data += elision_note(tok.elided).encode()
        return data


def unescape(body: bytes, reader: _Reader, line: int) -> bytes:
    """A protobuf-text string literal's body (without quotes) -> its bytes (C escapes, octal, hex)."""

    def sub(m: re.Match[bytes]) -> bytes:
        octal, hexa, char = m.groups()
        if octal is not None:
            value = int(octal, 8)
            if value > 255:
                raise reader.error(f"bad octal escape \\{octal.decode()}", line)
            return bytes([value])
        if hexa is not None:
            return bytes([int(hexa, 16)])
        if char in _SIMPLE:
            return _SIMPLE[char]
        raise reader.error(f"unknown escape \\{char.decode('latin-1')}", line)

    return _ESCAPE.sub(sub, body)


def escape(data: bytes, quote: str) -> str:
    """Bytes -> the body of a ``quote``-quoted protobuf-text string (ASCII only)."""
    out = []
    for byte in data:
        ch = chr(byte)
        if ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch in ("\\", quote):
            out.append("\\" + ch)
        elif 32 <= byte < 127:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


def _text(value: Any, what: str, reader: _Reader, line: int) -> str:
    if not isinstance(value, bytes):
        raise reader.error(f"{what} must be a quoted string", line)
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as e:
        raise reader.error(f"{what} is not UTF-8", line) from e


def _attr_entry(field: Field, reader: _Reader) -> tuple[str, Field | None]:
    if not isinstance(field.value, list):
        raise reader.error("attr must be a block: attr { key: ... value { s: ... } }", field.line)
    key = None
    value = None
    for sub in field.value:
        if sub.name == "key":
            key = _text(sub.value, "attr key", reader, sub.line)
        elif sub.name == "value":
            value = sub
    if key is None:
        raise reader.error("attr without key", field.line)
    return key, value


def _fill_attr(attr: Any, value: Field | None, reader: _Reader) -> None:
    """TorchAir's ``value { s: '<AttrDef text>' }``; anything else (real TF pbtxt) is kept as text."""
    if value is None:
        return
    if not isinstance(value.value, list):
        raise reader.error("attr value must be a block: value { s: ... }", value.line)
    s_fields = [f for f in value.value if f.name == "s"]
    if len(s_fields) == 1 and isinstance(s_fields[0].value, bytes) and len(value.value) == 1:
        raw = s_fields[0].value
        try:
            text_format.Parse(raw.decode("utf-8"), attr)
            return
        except (text_format.ParseError, UnicodeDecodeError, RecursionError, ValueError, TypeError):
            attr.Clear()
            attr.s = raw  # a plain TF string attribute
            return
    attr.s = _render(value.value).encode("utf-8")


def _render(fields: list[Field]) -> str:
    parts = []
    for f in fields:
        if isinstance(f.value, list):
            parts.append(f"{f.name} {{ {_render(f.value)} }}")
        elif isinstance(f.value, bytes):
            parts.append(f'{f.name}: "{escape(f.value, chr(34))}"')
        else:
            parts.append(f"{f.name}: {f.value}")
    return " ".join(parts)


def _fill_desc(desc: Any, value: Field | None, key: str, reader: _Reader, line: int) -> None:
    if value is None:
        return
    s_fields = [f for f in value.value if f.name == "s"] if isinstance(value.value, list) else []
    if len(s_fields) != 1 or not isinstance(s_fields[0].value, bytes):
        raise reader.error(f"descriptor {key!r} must be value {{ s: '<TensorDescriptor text>' }}", line)
    try:
        text_format.Parse(s_fields[0].value.decode("utf-8"), desc)
    except (text_format.ParseError, UnicodeDecodeError, RecursionError, ValueError, TypeError) as e:
        raise reader.error(f"malformed tensor descriptor {key!r}: {e}", s_fields[0].line) from e


def parse_pbtxt(text: str, origin: str = "<pbtxt>", default_name: str = "graph") -> Graph:
    """A graph from the text of a ``.pbtxt`` dump; errors name ``origin`` and the line."""
    return read_pbtxt_stream(io.BytesIO(text.encode("utf-8", "surrogateescape")), origin, default_name)


def read_pbtxt_stream(stream: BinaryIO, origin: str = "<pbtxt>", default_name: str = "graph",
                      ref_lines: dict[tuple[str, str], int] | None = None) -> Graph:
    """A graph from a ``.pbtxt`` dump read in chunks, node by node (bounded memory, see text_scan).
    ``ref_lines`` (when given) receives the line of each (node, input) for later error messages."""
    start = stream.tell()
    first = stream.readline(1 << 16)
    header = read_header(first.decode("utf-8", "replace"), origin)
    stream.seek(start)
    reader = _Reader(scan(stream, origin, hint=HINT), origin)
    graph_def = message_class("GraphDef")(name=default_name)
    lines: dict[str, int] = {}
    ref_lines = {} if ref_lines is None else ref_lines
    for entry in reader.entries():
        if entry.name != "node":
            continue  # versions { }, library { } in TensorFlow's own files
        if not isinstance(entry.value, list):
            raise reader.error("node must be a block: node { ... }", entry.line)
        op = graph_def.op.add()
        refs: list[tuple[str, int]] = []
        for f in entry.value:
            if f.name == "name":
                op.name = _text(f.value, "name", reader, f.line)
            elif f.name == "op":
                op.type = _text(f.value, "op", reader, f.line)
            elif f.name == "device":  # written for GE's build: "stream:<stream_id>"
                device = _text(f.value, "device", reader, f.line)
                if device.startswith(STREAM_DEVICE) and device[len(STREAM_DEVICE):].isdigit():
                    op.stream_id = int(device[len(STREAM_DEVICE):])
            elif f.name == "input":
                ref = _text(f.value, "input", reader, f.line)
                op.input.append(ref[1:] + ":-1" if ref.startswith("^") else ref)
                refs.append((ref[1:] if ref.startswith("^") else ref, f.line))
            elif f.name == "attr":
                key, value = _attr_entry(f, reader)
                if key.startswith("[i]"):
                    _fill_desc(op.input_desc.add(), value, key, reader, f.line)
                elif key.startswith("[o]"):
                    _fill_desc(op.output_desc.add(), value, key, reader, f.line)
                else:
                    _fill_attr(op.attr[key], value, reader)
        if not op.name:
            raise reader.error("node without name", entry.line)
        if op.name in lines:
            raise GraphReadError(f"duplicate node name {op.name!r}", file=origin, line=entry.line, node=op.name,
                                 hint=f"first defined on line {lines[op.name]}")
        lines[op.name] = entry.line
        for ref, line in refs:
            ref_lines.setdefault((op.name, ref), line)
    graph = graph_from_ge_proto(graph_def, name=default_name)
    apply_overrides(graph, origin, lines)
    graph = apply_header(graph, header, origin)
    if reader.elided:
        graph.attrs.setdefault("airctl_elided", [{"line": line, "bytes": n} for line, n in reader.elided])
    return graph


def _attr_block(lines: list[str], key: str, payload: str) -> None:
    lines += [f"{INDENT}attr {{", f'{INDENT * 2}key: "{escape(key.encode("utf-8"), chr(34))}"',
              f"{INDENT * 2}value {{", f"{INDENT * 3}s: '{escape(payload.encode('utf-8'), chr(39))}'",
              f"{INDENT * 2}}}", f"{INDENT}}}"]


def write_pbtxt(graph: Graph) -> str:
    """TorchAir-style pbtxt of the graph, with an ``# airctl-graph:`` first line (name, dialect, attrs)."""
    graph_def, header = to_graph_def(graph)
    header = {"name": graph.name, **header}
    if graph.attrs:
        header["attrs"] = graph.attrs
    lines: list[str] = []
    q = chr(34)
    for op in graph_def.op:
        lines.append("node {")
        lines.append(f'{INDENT}name: "{escape(op.name.encode("utf-8"), q)}"')
        lines.append(f'{INDENT}op: "{escape(op.type.encode("utf-8"), q)}"')
        if op.stream_id > 0:  # GE's build (the ge-build stage): NodeDef's own device field
            lines.append(f'{INDENT}device: "{STREAM_DEVICE}{op.stream_id}"')
        for ref in op.input:
            shown = "^" + ref[:-3] if ref.endswith(":-1") else ref
            lines.append(f'{INDENT}input: "{escape(shown.encode("utf-8"), q)}"')
        for key in sorted(op.attr):
            _attr_block(lines, key, text_format.MessageToString(op.attr[key]))
        for prefix, descs in (("[i]", op.input_desc), ("[o]", op.output_desc)):
            for desc in descs:
                _attr_block(lines, prefix + desc.name, text_format.MessageToString(desc))
        lines.append("}")
    return header_line(header) + "\n".join(lines) + ("\n" if lines else "")

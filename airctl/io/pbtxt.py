"""TorchAir's ``.pbtxt`` graph dumps: TensorFlow-GraphDef-style text (reference/torchair.md §5.1, §5.4).

This is *not* protobuf text of the GE ``GraphDef``: every node is ``node { name op input* attr* }``
with 4-space indentation, control inputs are ``^X``, every GE attribute is a string
``s: '<protobuf text of the AttrDef>'`` and each input/output descriptor is a pseudo-attribute
``[i]<name>`` / ``[o]<name>`` holding its ``TensorDescriptor`` text. Graph attributes are absent.

Reading tokenizes the outer structure here (so every error has a line), turns each node back
into a GE ``OpDef`` and maps it like a ``.txt`` dump, so both dumps of one graph give equal
nodes. Writing produces the same layout TorchAir writes, so Netron and TensorBoard open it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import text_format

from airctl.errors import GraphReadError
from airctl.graph.model import Graph
from airctl.io.ge_build import apply_header, apply_overrides, header_line, read_header, to_graph_def
from airctl.io.ge_proto import graph_from_ge_proto
from airctl.io.ge_schema import message_class

HINT = "expected a TorchAir .pbtxt dump: `node { name: ... op: ... }` blocks (config.debug.graph_dump.type = 'pbtxt')"
INDENT = "    "
MAX_DEPTH = 64

_TOKEN = re.compile(
    r"""(?P<nl>\n)|(?P<ws>[ \t\r\f\v]+)|(?P<comment>\#[^\n]*)
    |(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
    |(?P<word>[-+]?[A-Za-z0-9_.]+)
    |(?P<sym>[{}:<>\[\],;])""",
    re.VERBOSE,
)
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
    def __init__(self, text: str, origin: str) -> None:
        self.origin = origin
        self.tokens: list[tuple[str, str, int]] = []
        line = 1
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                if text[pos] in "'\"":
                    raise self.error("unterminated string (truncated file?)", line)
                raise self.error(f"unexpected character {text[pos]!r}", line)
            kind = m.lastgroup or ""
            if kind == "nl":
                line += 1
            elif kind not in ("ws", "comment"):
                self.tokens.append((kind, m.group(), line))
            pos = m.end()
        self.last_line = line
        self.pos = 0

    def error(self, message: str, line: int) -> GraphReadError:
        return GraphReadError(message, file=self.origin, line=line, hint=HINT)

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, what: str) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise self.error(f"unexpected end of file, expected {what} (truncated file?)", self.last_line)
        self.pos += 1
        return tok

    def fields(self, close: str | None, depth: int = 0) -> list[Field]:
        if depth > MAX_DEPTH:
            raise self.error("nesting too deep", self.tokens[self.pos - 1][2])
        out: list[Field] = []
        while True:
            tok = self.peek()
            if tok is None:
                if close is None:
                    return out
                raise self.error(f"unexpected end of file, expected {close!r} (truncated file?)", self.last_line)
            kind, text, line = tok
            if kind == "sym" and text == close:
                self.pos += 1
                return out
            if kind != "word":
                raise self.error(f"expected a field name, got {text!r}", line)
            self.pos += 1
            out.append(Field(text, self.value(depth), line))
            nxt = self.peek()
            if nxt is not None and nxt[0] == "sym" and nxt[1] in ",;":
                self.pos += 1

    def value(self, depth: int) -> bytes | str | list[Field]:
        kind, text, line = self.take("a value")
        if kind == "sym" and text == ":":
            kind, text, line = self.take("a value")
        if kind == "sym" and text in "{<":
            return self.fields("}" if text == "{" else ">", depth + 1)
        if kind == "str":
            parts = [unescape(text, self, line)]
            while (nxt := self.peek()) is not None and nxt[0] == "str":  # "a" "b" concatenates
                self.pos += 1
                parts.append(unescape(nxt[1], self, nxt[2]))
            return b"".join(parts)
        if kind == "word":
            return text
        raise self.error(f"expected a value, got {text!r}", line)


def unescape(token: str, reader: _Reader, line: int) -> bytes:
    """A quoted protobuf-text string token -> its bytes (C escapes, octal, hex)."""
    body = token[1:-1].encode("utf-8", "surrogateescape")

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
    header = read_header(text, origin)
    reader = _Reader(text, origin)
    top = reader.fields(None)
    graph_def = message_class("GraphDef")(name=default_name)
    lines: dict[str, int] = {}
    for entry in top:
        if entry.name != "node":
            continue  # versions { }, library { } in TensorFlow's own files
        if not isinstance(entry.value, list):
            raise reader.error("node must be a block: node { ... }", entry.line)
        op = graph_def.op.add()
        for f in entry.value:
            if f.name == "name":
                op.name = _text(f.value, "name", reader, f.line)
            elif f.name == "op":
                op.type = _text(f.value, "op", reader, f.line)
            elif f.name == "input":
                ref = _text(f.value, "input", reader, f.line)
                op.input.append(ref[1:] + ":-1" if ref.startswith("^") else ref)
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
    graph = graph_from_ge_proto(graph_def, name=default_name)
    apply_overrides(graph, origin, lines)
    return apply_header(graph, header, origin)


def read_pbtxt(path: Path | str) -> Graph:
    path = Path(path)
    return parse_pbtxt(path.read_text(encoding="utf-8"), str(path), default_name=path.stem)


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

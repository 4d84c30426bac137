"""GE IR message classes, built at run time from ``ge_ir.proto`` without protoc.

TorchAir's ``.txt`` dumps are protobuf text of ``ge.proto.GraphDef`` (reference/torchair.md
§5.1). To parse them without TorchAir (and without its generated ``*_pb2`` modules), airctl
keeps its own schema in ``airctl/io/ge_ir.proto`` and turns it into a ``FileDescriptorProto``
with the small parser below, then into classes in a *private* descriptor pool, so the
names can never clash with TorchAir's own ``ge.proto`` registration in the default pool.

The parser accepts exactly the subset ``ge_ir.proto`` uses: ``syntax``/``package``, messages,
nested messages and enums, ``repeated``/``map<,>``/``oneof`` fields and ``//`` comments.

>>> GraphDef = message_class("GraphDef")
>>> g = GraphDef(name="g"); g.op.add(name="MatMul", type="MatMul").input.append("x:0")
>>> g.op[0].input
['x:0']
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PROTO_PATH = Path(__file__).with_name("ge_ir.proto")

_SCALARS = {
    "double": descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE,
    "float": descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT,
    "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
    "uint64": descriptor_pb2.FieldDescriptorProto.TYPE_UINT64,
    "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    "uint32": descriptor_pb2.FieldDescriptorProto.TYPE_UINT32,
    "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "bytes": descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
}
_TOKEN = re.compile(r"//[^\n]*|\s+|(\"[^\"]*\"|[A-Za-z_][\w.]*|\d+|[{}<>;=,])")
_F = descriptor_pb2.FieldDescriptorProto


class ProtoSyntaxError(ValueError):
    """``ge_ir.proto`` uses something outside the supported subset (a bug in airctl)."""


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ProtoSyntaxError(f"unexpected character {text[pos]!r} at offset {pos}")
        if m.group(1):
            out.append(m.group(1))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.pos = 0
        self.types: set[str] = set()
        self.enums: set[str] = set()
        self.refs: list[tuple[Any, str, str]] = []  # (field proto, type as written, scope full name)

    def next(self) -> str:
        if self.pos >= len(self.toks):
            raise ProtoSyntaxError("unexpected end of file")
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def expect(self, want: str) -> None:
        tok = self.next()
        if tok != want:
            raise ProtoSyntaxError(f"expected {want!r}, got {tok!r}")

    def parse(self) -> descriptor_pb2.FileDescriptorProto:
        fdp = descriptor_pb2.FileDescriptorProto(name="airctl/ge_ir.proto", syntax="proto3")
        while self.pos < len(self.toks):
            tok = self.next()
            if tok == "syntax":
                self.expect("=")
                self.next()
                self.expect(";")
            elif tok == "package":
                fdp.package = self.next()
                self.expect(";")
            elif tok == "message":
                self._message(fdp.message_type.add(), fdp.package)
            elif tok == "enum":
                self._enum(fdp.enum_type.add(), fdp.package)
            else:
                raise ProtoSyntaxError(f"unsupported top-level token {tok!r}")
        for fld, written, scope in self.refs:
            self._resolve(fld, written, scope)
        return fdp

    def _enum(self, proto: Any, parent: str) -> None:
        proto.name = self.next()
        self.types.add(f"{parent}.{proto.name}")
        self.enums.add(f"{parent}.{proto.name}")
        self.expect("{")
        while (tok := self.next()) != "}":
            self.expect("=")
            proto.value.add(name=tok, number=int(self.next()))
            self.expect(";")

    def _message(self, proto: Any, parent: str) -> None:
        proto.name = self.next()
        full = f"{parent}.{proto.name}"
        self.types.add(full)
        self.expect("{")
        while (tok := self.next()) != "}":
            if tok == "message":
                self._message(proto.nested_type.add(), full)
            elif tok == "enum":
                self._enum(proto.enum_type.add(), full)
            elif tok == "oneof":
                index = len(proto.oneof_decl)
                proto.oneof_decl.add(name=self.next())
                self.expect("{")
                while (inner := self.next()) != "}":
                    self._field(proto, full, inner, _F.LABEL_OPTIONAL, oneof=index)
            elif tok == "repeated":
                self._field(proto, full, self.next(), _F.LABEL_REPEATED)
            elif tok == "map":
                self._map(proto, full)
            else:
                self._field(proto, full, tok, _F.LABEL_OPTIONAL)

    def _field(self, msg: Any, scope: str, type_name: str, label: int, oneof: int | None = None) -> Any:
        name = self.next()
        self.expect("=")
        number = int(self.next())
        self.expect(";")
        fld = msg.field.add(name=name, number=number, label=label, json_name=_json_name(name))
        if oneof is not None:
            fld.oneof_index = oneof
        if type_name in _SCALARS:
            fld.type = _SCALARS[type_name]
        else:
            self.refs.append((fld, type_name, scope))
        return fld

    def _map(self, msg: Any, scope: str) -> None:
        self.expect("<")
        key_type = self.next()
        self.expect(",")
        value_type = self.next()
        self.expect(">")
        name = self.toks[self.pos]
        entry = msg.nested_type.add(name="".join(p.capitalize() for p in name.split("_")) + "Entry")
        entry.options.map_entry = True
        entry_scope = f"{scope}.{entry.name}"
        for fname, number, tname in (("key", 1, key_type), ("value", 2, value_type)):
            fld = entry.field.add(name=fname, number=number, label=_F.LABEL_OPTIONAL, json_name=fname)
            if tname in _SCALARS:
                fld.type = _SCALARS[tname]
            else:
                self.refs.append((fld, tname, entry_scope))
        fld = self._field(msg, scope, "__map__", _F.LABEL_REPEATED)
        self.refs.pop()  # the placeholder type: the entry is resolved right here
        fld.type = _F.TYPE_MESSAGE
        fld.type_name = f".{entry_scope}"

    def _resolve(self, fld: Any, written: str, scope: str) -> None:
        """Protobuf's scoping rule: look the name up from the innermost scope outwards."""
        parts = scope.split(".")
        for depth in range(len(parts), -1, -1):
            candidate = ".".join(parts[:depth] + [written]) if depth else written
            if candidate in self.types:
                fld.type_name = f".{candidate}"
                fld.type = _F.TYPE_ENUM if candidate in self.enums else _F.TYPE_MESSAGE
                return
        raise ProtoSyntaxError(f"unknown type {written!r} in {scope}")

def _json_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.capitalize() for p in rest)


def parse_proto(text: str) -> descriptor_pb2.FileDescriptorProto:
    """A ``FileDescriptorProto`` for proto source in the subset described above."""
    return _Parser(text).parse()


@functools.lru_cache(maxsize=1)
def _pool() -> tuple[descriptor_pool.DescriptorPool, str]:
    fdp = parse_proto(PROTO_PATH.read_text(encoding="utf-8"))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return pool, fdp.package


@functools.cache
def message_class(name: str) -> type:
    """The runtime class of a GE IR message, e.g. ``message_class("GraphDef")``."""
    pool, package = _pool()
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}"))

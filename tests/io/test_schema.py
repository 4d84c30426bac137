"""ge_ir.proto is parsed at run time; every field it declares must reach the message classes."""

from __future__ import annotations

import re

from google.protobuf import text_format

from airctl.io.ge_schema import PROTO_PATH, message_class, parse_proto


def test_every_declared_field_exists_with_its_number() -> None:
    text = PROTO_PATH.read_text(encoding="utf-8")
    fdp = parse_proto(text)
    declared = {}

    def walk(msgs, prefix):
        for m in msgs:
            if m.options.map_entry:  # the key/value message protobuf makes for a map<> field
                continue
            for f in m.field:
                declared[(m.name, f.name)] = f.number
            walk(m.nested_type, prefix + m.name + ".")

    walk(fdp.message_type, "")
    numbers = {(field, number) for (_, field), number in declared.items()}
    written = re.findall(r"^\s+(?:repeated\s+)?(?:map<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*(\d+);", text, re.MULTILINE)
    assert len(written) == len(declared)  # every field written in the file, parsed
    for field, number in written:
        assert (field, int(number)) in numbers, (field, number)  # by its name and its number
    assert declared[("OpDef", "output_desc")] == 34
    assert declared[("AttrDef", "list_list_float")] == 16
    assert declared[("TensorDescriptor", "cmps_tab_offset")] == 21


def test_documented_messages_parse_text() -> None:
    op = text_format.Parse('name: "Sub" type: "Sub" input: "Abs:-1"'
                           ' attr { key: "_user_stream_label" value { s: "s1" } }'
                           ' output_desc { name: "y" dtype: DT_BF16 shape { dim: -1 } }', message_class("OpDef")())
    assert op.attr["_user_stream_label"].s == b"s1"
    assert op.output_desc[0].dtype == 27
    attr = text_format.Parse("list_list_int { list_list_i { list_i: 1 list_i: 2 } }", message_class("AttrDef")())
    assert list(attr.list_list_int.list_list_i[0].list_i) == [1, 2]

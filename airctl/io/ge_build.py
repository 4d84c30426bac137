"""airctl's graph model -> GE ``GraphDef`` messages, losslessly; shared by the txt and pbtxt writers.

A GE OpDef cannot hold everything the model can (FX node kinds, source lines, JSON attrs
such as FX ``args``). The writers therefore encode what GE can express natively (attributes as
``AttrDef``, inputs, control inputs as ``X:-1``, output descriptors from ``meta["outputs"]``),
then read the result back with :func:`airctl.io.ge_proto.graph_from_ge_proto` and store only
what came back different in one reserved JSON attribute, ``_airctl``. Readers call
:func:`apply_overrides`. So ``read(write(g)) == g`` holds by construction, and a graph read from
a TorchAir dump writes back with no ``_airctl`` attribute at all (tests check both).

Graph-level fields a format cannot carry go into a first-line comment ``# airctl-graph: {json}``
(protobuf text format ignores ``#`` comments, so TorchAir, protobuf and Netron still parse it).
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

from airctl.errors import GraphReadError
from airctl.graph.model import Graph
from airctl.io.ge_proto import graph_from_ge_proto
from airctl.io.ge_schema import message_class

OVERRIDE_ATTR = "_airctl"
HEADER_PREFIX = "# airctl-graph: "
NODE_FIELDS = ("inputs", "control_inputs", "attrs", "stream", "source", "module", "kind", "meta")
_INT64 = (-(2**63), 2**63 - 1)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and _INT64[0] <= v <= _INT64[1]


def _is_f32(v: Any) -> bool:
    if not isinstance(v, float):
        return False
    if math.isnan(v):
        return False  # NaN != NaN: the model could never compare equal after a round trip
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0] == v
    except OverflowError:
        return False


def _utf8(v: str) -> bytes | None:
    try:
        return v.encode("utf-8")
    except UnicodeEncodeError:
        return None


def encode_attr(value: Any) -> Any | None:
    """An ``AttrDef`` that :func:`airctl.io.ge_proto.attr_value` decodes back to ``value``, or None."""
    attr = message_class("AttrDef")()
    if value is None:
        return attr
    if isinstance(value, bool):
        attr.b = value
    elif _is_int(value):
        attr.i = value
    elif _is_f32(value):
        attr.f = value
    elif isinstance(value, str):
        raw = _utf8(value)
        if raw is None:
            return None
        attr.s = raw
    elif isinstance(value, list):
        return _encode_list(attr, value)
    elif isinstance(value, dict):
        return _encode_dict(attr, value)
    else:
        return None
    return attr


def _encode_list(attr: Any, value: list) -> Any | None:
    attr.list.SetInParent()
    if not value:
        return attr
    if all(isinstance(v, str) for v in value):
        raws = [_utf8(v) for v in value]
        if any(r is None for r in raws):
            return None
        attr.list.s.extend(raws)
    elif all(isinstance(v, bool) for v in value):
        attr.list.b.extend(value)
    elif all(_is_int(v) for v in value):
        attr.list.i.extend(value)
    elif all(_is_f32(v) for v in value):
        attr.list.f.extend(value)
    else:
        return None
    return attr


def _encode_dict(attr: Any, value: dict) -> Any | None:
    keys = set(value)
    if keys == {"dtype", "shape"} and _is_int(value["dtype"]) and _int_list(value["shape"]):
        attr.td.dtype = value["dtype"]
        attr.td.shape.dim.extend(value["shape"])
        return attr
    if keys in ({"tensor", "bytes", "dtype", "shape"}, {"tensor", "bytes", "dtype", "shape", "hex"}):
        if value["tensor"] is not True or not _is_int(value["dtype"]) or not _int_list(value["shape"]):
            return None
        if "hex" not in value or not isinstance(value["hex"], str):
            return None  # payload unknown: do not invent one
        try:
            data = bytes.fromhex(value["hex"])
        except ValueError:
            return None
        if len(data) != value["bytes"]:
            return None
        attr.t.desc.dtype = value["dtype"]
        attr.t.desc.shape.dim.extend(value["shape"])
        attr.t.data = data
        return attr
    return None


def _int_list(v: Any) -> bool:
    return isinstance(v, list) and all(_is_int(x) for x in v)


def _add_output_descs(op: Any, meta: dict[str, Any]) -> None:
    outputs = meta.get("outputs")
    if not isinstance(outputs, list):
        return
    fx = meta.get("fx_tensor_names")
    fx = fx if isinstance(fx, list) and len(fx) == len(outputs) else None
    for i, out in enumerate(outputs):
        if not isinstance(out, dict):
            return
        desc = op.output_desc.add()
        name, dtype, shape = out.get("name"), out.get("dtype"), out.get("shape")
        if isinstance(name, str) and _utf8(name) is not None:
            desc.name = name
        if _is_int(dtype) and -(2**31) <= dtype < 2**31:
            desc.dtype = dtype
        if _int_list(shape):
            desc.shape.dim.extend(shape)
        desc.layout = "ND"
        if fx is not None and isinstance(fx[i], str) and _utf8(fx[i]) is not None:
            desc.attr["_fx_tensor_name"].s = fx[i].encode("utf-8")


def to_graph_def(graph: Graph) -> tuple[Any, dict[str, Any]]:
    """The ``GraphDef`` for ``graph`` plus the graph-level fields it could not hold (for the header)."""
    graph_def = message_class("GraphDef")(name=graph.name)
    header: dict[str, Any] = {}
    for node in graph.nodes:
        op = graph_def.op.add(name=node.name, type=node.op)
        op.input.extend(node.inputs)
        op.input.extend(f"{c}:-1" for c in node.control_inputs)
        for key, value in node.attrs.items():
            encoded = encode_attr(value)
            if encoded is not None and key != OVERRIDE_ATTR:
                op.attr[key].CopyFrom(encoded)
        _add_output_descs(op, node.meta)
        if _is_int(node.meta.get("stream_id")):  # GE's build: the OpDef's own field
            op.stream_id = node.meta["stream_id"]
    gattrs_ok = True
    for key, value in graph.attrs.items():
        encoded = encode_attr(value)
        if encoded is None:
            gattrs_ok = False
            continue
        graph_def.attr[key].CopyFrom(encoded)
    back = graph_from_ge_proto(graph_def, name=graph.name)
    for node, op, got in zip(graph.nodes, graph_def.op, back.nodes, strict=True):
        diff = {f: getattr(node, f) for f in NODE_FIELDS if getattr(node, f) != getattr(got, f)}
        if diff:
            op.attr[OVERRIDE_ATTR].s = json.dumps(diff, sort_keys=True).encode("utf-8")
    if graph.dialect != "ge":
        header["dialect"] = graph.dialect
    if not gattrs_ok or back.attrs != graph.attrs:
        header["attrs"] = graph.attrs
    return graph_def, header


def apply_overrides(graph: Graph, origin: str, lines: dict[str, int] | None = None) -> Graph:
    """Undo :func:`to_graph_def`'s encoding: apply and drop every node's ``_airctl`` attribute."""
    for node in graph.nodes:
        raw = node.attrs.pop(OVERRIDE_ATTR, None)
        if raw is None:
            continue
        line = (lines or {}).get(node.name)
        try:
            data = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            data = None
        if not isinstance(data, dict) or not set(data) <= set(NODE_FIELDS):
            raise GraphReadError(f"malformed {OVERRIDE_ATTR} attribute", file=origin, line=line, node=node.name,
                                 hint=f"{OVERRIDE_ATTR} holds JSON written by airctl; delete it to keep the GE fields")
        for key, value in data.items():
            setattr(node, key, value)
    graph.invalidate()
    return graph


def header_line(header: dict[str, Any]) -> str:
    return HEADER_PREFIX + json.dumps(header, sort_keys=True) + "\n"


def read_header(text: str, origin: str) -> dict[str, Any]:
    """The ``# airctl-graph:`` header of a text dump, or ``{}``."""
    if not text.startswith(HEADER_PREFIX):
        return {}
    first = text.split("\n", 1)[0][len(HEADER_PREFIX):]
    try:
        data = json.loads(first)
    except ValueError as e:
        raise GraphReadError(f"malformed airctl-graph header: {e}", file=origin, line=1) from e
    if not isinstance(data, dict):
        raise GraphReadError("malformed airctl-graph header: not a JSON object", file=origin, line=1)
    return data


def apply_header(graph: Graph, header: dict[str, Any], origin: str) -> Graph:
    name, dialect, attrs = header.get("name"), header.get("dialect"), header.get("attrs")
    if (name is not None and not isinstance(name, str)) or (dialect is not None and not isinstance(dialect, str)) \
            or (attrs is not None and not isinstance(attrs, dict)):
        raise GraphReadError("malformed airctl-graph header: wrong field types", file=origin, line=1)
    if name is not None:
        graph.name = name
    if dialect is not None:
        graph.dialect = dialect
    if attrs is not None:
        graph.attrs = attrs
    return graph


def node_lines(text: str, prefix: str) -> dict[str, int]:
    """Line of each node's ``<prefix>"<name>"`` line (best effort, for error locations)."""
    out: dict[str, int] = {}
    marker = prefix + '"'
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.startswith(marker) and line.endswith('"'):
            out.setdefault(line[len(marker):-1], lineno)
    return out


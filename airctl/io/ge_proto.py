"""GE ``GraphDef`` protobuf messages -> airctl's graph model.

Works on any message with the GE IR fields (reference/torchair.md §5.2): TorchAir's own live
``GeGraph`` protos during capture, and messages parsed from ``.txt`` dumps by our runtime-built
schema. Inputs ``"X:-1"`` become control inputs; the stream is the ``_user_stream_label``
attribute, else the OpDef's ``stream_id`` when GE's build set one (kept as ``meta["stream_id"]``,
the stream named by its id); the FX provenance is the ``_fx_tensor_name`` of the output descriptors.
"""

from __future__ import annotations

import hashlib
from typing import Any

from airctl.graph.model import STREAM_LABEL, Graph, Node
from airctl.io.gc_pause import without_gc

TENSOR_HEX_LIMIT = 64  # tensor attrs up to this many bytes keep their data (as hex)


def attr_value(attr: Any) -> Any:
    """A JSON-able Python value for a GE ``AttrDef``."""
    which = attr.WhichOneof("value")
    if which is None:
        return None
    value = getattr(attr, which)
    if which in ("s", "bt", "expression"):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.hex()
    if which in ("i", "f", "b", "dt"):
        return value
    if which == "list":
        for field in ("s", "i", "f", "b", "dt"):
            items = list(getattr(value, field))
            if items:
                return [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in items]
        return []
    if which == "t":
        # dtype/shape and small payloads (TorchAir's scalar Consts) are kept so that a graph read
        # from a dump writes back unchanged (airctl/io/ge_build.py encodes this dict again).
        out: dict[str, Any] = {"tensor": True, "bytes": len(value.data), "dtype": int(value.desc.dtype),
                               "shape": list(value.desc.shape.dim)}
        if len(value.data) <= TENSOR_HEX_LIMIT:
            out["hex"] = value.data.hex()
        return out
    if which == "td":
        return {"dtype": int(value.dtype), "shape": list(value.shape.dim)}
    return str(value)


def _fx_names(op: Any) -> list[str]:
    names = []
    for desc in op.output_desc:
        if "_fx_tensor_name" in desc.attr:
            names.append(attr_value(desc.attr["_fx_tensor_name"]))
    return names


def ge_digest(graph_def: Any) -> str:
    """A digest of a GE ``GraphDef`` (its deterministic serialization: ops, attributes, descriptors,
    graph attributes). Serializing is C code, so this costs a few percent of
    :func:`graph_from_ge_proto`; the pass runner takes it around every GE pass."""
    return hashlib.blake2b(graph_def.SerializeToString(deterministic=True), digest_size=16).hexdigest()


@without_gc  # 10k ops, no cycles: no collection while reading (airctl/io/gc_pause.py)
def graph_from_ge_proto(graph_def: Any, name: str | None = None) -> Graph:
    nodes: list[Node] = []
    for op in graph_def.op:
        inputs: list[str] = []
        control: list[str] = []
        for ref in op.input:
            if ref.endswith(":-1"):
                control.append(ref[:-3])
            elif ref.startswith("^"):
                control.append(ref[1:])
            else:
                inputs.append(ref)
        attrs = {k: attr_value(v) for k, v in sorted(op.attr.items())}
        stream = attrs.get(STREAM_LABEL)
        meta: dict[str, Any] = {}
        stream_id = int(getattr(op, "stream_id", 0) or 0)  # set by GE's build (airctl's ge-build stage)
        if stream_id:
            meta["stream_id"] = stream_id
            if stream is None and stream_id > 0:
                stream = str(stream_id)
        fx = _fx_names(op)
        if fx:
            meta["fx_tensor_names"] = fx
        outs = []
        for desc in op.output_desc:
            if desc.dtype or len(desc.shape.dim):
                outs.append({"name": desc.name, "dtype": int(desc.dtype), "shape": list(desc.shape.dim)})
        if outs:
            meta["outputs"] = outs
        nodes.append(Node(name=op.name, op=op.type, inputs=inputs, control_inputs=control, attrs=attrs,
                          stream=str(stream) if stream is not None else None, kind="op", meta=meta))
    gattrs = {k: attr_value(v) for k, v in sorted(graph_def.attr.items())}
    return Graph(name=name or graph_def.name or "graph", dialect="ge", nodes=nodes, attrs=gattrs)

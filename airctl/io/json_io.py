"""The graph model as JSON (docs/graph-json.md): the ledger's snapshot format and ``--type json``.

``{"name", "dialect", "attrs", "nodes": [{"name", "op", "kind", "stream", "inputs",
"control_inputs", "attrs", "source", "module", "meta"}], "edges": [{"src", "dst", "kind"}]}``.
``edges`` is derived (written for readers' convenience, ignored when reading back).

Reading checks the shape strictly — ``format``/``version`` when present, and every field's type
(``op: null`` is an error naming the node, not the op ``"None"``) — because graph files come from
anywhere. Writing is standard JSON: a float that is not finite (a NaN constant in an attribute)
is written as the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from airctl.errors import GraphReadError
from airctl.graph.model import Graph, Node
from airctl.io.gc_pause import gc_paused

FORMAT_VERSION = 1
# a node's fields, in the order the full document writes them
NODE_KEYS = ("name", "op", "kind", "stream", "inputs", "control_inputs", "attrs", "source", "module", "meta")


def to_dict(graph: Graph, compact: bool = False) -> dict[str, Any]:
    """The document; ``compact`` (ledger snapshots): a node field at its default (``null``, ``[]``,
    ``{}``, kind ``"op"``) is left out and the derived ``edges`` are not written, which the reader
    takes as the same graph (a 50k-node snapshot: 12 MB of JSON down to about a third, read back in
    half the time)."""
    if compact:
        return {"format": "airctl-graph", "version": FORMAT_VERSION, "name": graph.name, "dialect": graph.dialect,
                "attrs": graph.attrs, "nodes": [_compact_node(n) for n in graph.nodes]}
    return {
        "format": "airctl-graph",
        "version": FORMAT_VERSION,
        "name": graph.name,
        "dialect": graph.dialect,
        "attrs": graph.attrs,
        "nodes": [{key: getattr(n, key) for key in NODE_KEYS} for n in graph.nodes],
        "edges": [{"src": e.src, "dst": e.dst, "kind": e.kind} for e in graph.edges()],
    }


def _compact_node(n: Node) -> dict[str, Any]:
    out: dict[str, Any] = {"name": n.name, "op": n.op}
    if n.kind != "op":
        out["kind"] = n.kind
    if n.stream is not None:
        out["stream"] = n.stream
    if n.inputs:
        out["inputs"] = n.inputs
    if n.control_inputs:
        out["control_inputs"] = n.control_inputs
    if n.attrs:
        out["attrs"] = n.attrs
    if n.source is not None:
        out["source"] = n.source
    if n.module is not None:
        out["module"] = n.module
    if n.meta:
        out["meta"] = n.meta
    return out


HINT = "expected the output of `airctl dump --type json` or a ledger snapshot (docs/graph-json.md)"
_OPTIONAL_TEXT = ("stream", "source", "module")


def _field(raw: dict[str, Any], key: str, kind: type, default: Any, origin: str, i: int) -> Any:
    value = raw.get(key, default)
    if value is None and default is None:
        return None
    if value is None:
        value = default
    if not isinstance(value, kind) or (kind is list and not all(isinstance(v, str) for v in value)):
        what = {str: "a string", list: "a list of strings", dict: "an object"}[kind]
        name = raw.get("name") if isinstance(raw.get("name"), str) else None
        raise GraphReadError(f"node #{i}: {key!r} has the wrong type: expected {what}, got "
                             f"{type(value).__name__}", file=origin, node=name, hint=HINT)
    return value


def _well_typed(raw: Any) -> Node | None:
    """The node, when every field has exactly its JSON type (what ``write_json`` writes); else None,
    and :func:`from_dict` checks field by field to say what is wrong. A fast path: 50k-node graphs."""
    if type(raw) is not dict:
        return None
    get = raw.get
    name, op, inputs, ctrl = get("name"), get("op"), get("inputs"), get("control_inputs")
    attrs, meta, stream, source, module, kind = (get("attrs"), get("meta"), get("stream"), get("source"),
                                                 get("module"), get("kind"))
    inputs = [] if inputs is None else inputs
    ctrl = [] if ctrl is None else ctrl
    attrs = {} if attrs is None else attrs
    meta = {} if meta is None else meta
    if not (type(name) is str and name and type(op) is str and op and type(inputs) is list and type(ctrl) is list
            and type(attrs) is dict and type(meta) is dict and (stream is None or type(stream) is str)
            and (source is None or type(source) is str) and (module is None or type(module) is str)
            and (kind is None or type(kind) is str)):
        return None
    try:  # every input reference a string: join raises TypeError otherwise (C speed, no Python loop)
        "".join(inputs)
        "".join(ctrl)
    except TypeError:
        return None
    # the node takes the lists and dicts as they are: ``raw`` is fresh from json.loads, shared with nothing;
    # positional arguments, in Node's field order: half the cost of keywords (50k nodes a snapshot)
    return Node(name, op, inputs, ctrl, attrs, stream, source, module, kind or "op", meta)


def from_dict(data: dict[str, Any], origin: str = "<json>") -> Graph:
    """The graph of a parsed airctl graph JSON document; its nodes may keep ``data``'s own lists and
    dicts (callers pass what json.loads just returned)."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise GraphReadError("not an airctl graph JSON (no 'nodes' list)", file=origin, line=1, hint=HINT)
    if data.get("format", "airctl-graph") != "airctl-graph":
        raise GraphReadError(f"not an airctl graph JSON (format {data.get('format')!r})", file=origin, line=1,
                             hint=HINT)
    version = data.get("version", FORMAT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version > FORMAT_VERSION:
        raise GraphReadError(f"graph JSON version {version!r} is not one this airctl reads (<= {FORMAT_VERSION})",
                             file=origin, line=1, hint="written by a newer airctl? upgrade airctl to read it")
    nodes = []
    for i, raw in enumerate(data["nodes"]):
        node = _well_typed(raw)
        if node is not None:
            nodes.append(node)
            continue
        if not isinstance(raw, dict):
            raise GraphReadError(f"node #{i} is not an object", file=origin, hint=HINT)
        for key in ("name", "op"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise GraphReadError(f"node #{i}: {key!r} must be a non-empty string, not {raw.get(key)!r}",
                                     file=origin, hint=HINT)
        nodes.append(Node(
            name=raw["name"], op=raw["op"],
            inputs=list(_field(raw, "inputs", list, [], origin, i)),
            control_inputs=list(_field(raw, "control_inputs", list, [], origin, i)),
            attrs=dict(_field(raw, "attrs", dict, {}, origin, i)),
            stream=_field(raw, "stream", str, None, origin, i),
            source=_field(raw, "source", str, None, origin, i),
            module=_field(raw, "module", str, None, origin, i),
            kind=_field(raw, "kind", str, "op", origin, i) or "op",
            meta=dict(_field(raw, "meta", dict, {}, origin, i)),
        ))
    for key, kind in (("name", str), ("dialect", str), ("attrs", dict)):
        if key in data and data[key] is not None and not isinstance(data[key], kind):
            raise GraphReadError(f"graph {key!r} has the wrong type ({type(data[key]).__name__})", file=origin,
                                 hint=HINT)
    name, dialect = data.get("name"), data.get("dialect")
    return Graph(name="graph" if name is None else name, dialect="fx" if dialect is None else dialect, nodes=nodes,
                 attrs=dict(data.get("attrs") or {}))


def non_finite_text(value: float) -> str:
    """How a NaN or an infinity is spelt in airctl's JSON (standard JSON has no such numbers):
    ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (the graph readers and the report use it too)."""
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float as a string (:func:`non_finite_text`)."""
    if isinstance(value, float) and not math.isfinite(value):
        return non_finite_text(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def write_json(graph: Graph, path: Path | str | None = None, indent: int | None = None, compact: bool = False) -> str:
    """``graph`` as airctl graph JSON (``compact``: :func:`to_dict`'s, as the ledger stores snapshots)."""
    # indent=None keeps json's C encoder; an indent switches to the pure-Python one (~5x slower)
    separators = (",", ":") if indent is None else None
    with gc_paused():  # a dict per node and per edge, dropped at once (airctl/io/gc_pause.py)
        data = to_dict(graph, compact)
        try:
            text = json.dumps(data, indent=indent, separators=separators, allow_nan=False)
        except ValueError:  # a NaN or an infinity in a GE attribute (FX reads spell them as strings): rewritten
            text = json.dumps(_finite(data), indent=indent, separators=separators, allow_nan=False)
        del data
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def parse_json(text: str, origin: str) -> Graph:
    """The graph of airctl graph JSON text; whatever is wrong with it, a GraphReadError."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise GraphReadError(f"invalid JSON: {e.msg}", file=origin, line=e.lineno, column=e.colno) from e
    except RecursionError as e:
        raise GraphReadError("invalid JSON: nesting too deep", file=origin, line=1) from e
    try:
        return from_dict(data, origin)
    except GraphReadError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError) as e:
        raise GraphReadError(f"not an airctl graph JSON: {e}", file=origin, line=1) from e


def read_json(path: Path | str) -> Graph:
    """An airctl graph JSON file (``.json``, or ``.json.gz`` as the ledger stores snapshots)."""
    from airctl.io.compressed import read_bytes

    path = Path(path)
    try:
        text = read_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise GraphReadError(f"cannot read: {e}", file=str(path)) from e
    return parse_json(text, str(path))

"""The graph model as JSON (docs/graph-json.md): the ledger's snapshot format and ``--type json``.

``{"name", "dialect", "attrs", "nodes": [{"name", "op", "kind", "stream", "inputs",
"control_inputs", "attrs", "source", "module", "meta"}], "edges": [{"src", "dst", "kind"}]}``.
``edges`` is derived (written for readers' convenience, ignored when reading back).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from airctl.errors import GraphReadError
from airctl.graph.model import Graph, Node

FORMAT_VERSION = 1


def to_dict(graph: Graph) -> dict[str, Any]:
    return {
        "format": "airctl-graph",
        "version": FORMAT_VERSION,
        "name": graph.name,
        "dialect": graph.dialect,
        "attrs": graph.attrs,
        "nodes": [
            {
                "name": n.name,
                "op": n.op,
                "kind": n.kind,
                "stream": n.stream,
                "inputs": n.inputs,
                "control_inputs": n.control_inputs,
                "attrs": n.attrs,
                "source": n.source,
                "module": n.module,
                "meta": n.meta,
            }
            for n in graph.nodes
        ],
        "edges": [{"src": e.src, "dst": e.dst, "kind": e.kind} for e in graph.edges()],
    }


def from_dict(data: dict[str, Any], origin: str = "<json>") -> Graph:
    if not isinstance(data, dict) or "nodes" not in data:
        raise GraphReadError("not an airctl graph JSON (no 'nodes' list)", file=origin,
                             hint="expected the output of `airctl dump --type json` or a ledger snapshot")
    nodes = []
    for i, raw in enumerate(data["nodes"]):
        if not isinstance(raw, dict) or "name" not in raw or "op" not in raw:
            raise GraphReadError(f"node #{i} lacks 'name' or 'op'", file=origin)
        nodes.append(
            Node(
                name=str(raw["name"]),
                op=str(raw["op"]),
                inputs=list(raw.get("inputs") or []),
                control_inputs=list(raw.get("control_inputs") or []),
                attrs=dict(raw.get("attrs") or {}),
                stream=raw.get("stream"),
                source=raw.get("source"),
                module=raw.get("module"),
                kind=str(raw.get("kind") or "op"),
                meta=dict(raw.get("meta") or {}),
            )
        )
    return Graph(name=str(data.get("name", "graph")), dialect=str(data.get("dialect", "fx")), nodes=nodes,
                 attrs=dict(data.get("attrs") or {}))


def write_json(graph: Graph, path: Path | str | None = None, indent: int | None = None) -> str:
    # indent=None keeps json's C encoder; an indent switches to the pure-Python one (~5x slower)
    text = json.dumps(to_dict(graph), indent=indent, separators=(",", ":") if indent is None else None)
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def read_json(path: Path | str) -> Graph:
    """An airctl graph JSON file (``.json``, or ``.json.gz`` as the ledger stores snapshots)."""
    from airctl.io.compressed import read_bytes

    path = Path(path)
    try:
        data = json.loads(read_bytes(path).decode("utf-8"))
    except json.JSONDecodeError as e:
        raise GraphReadError(f"invalid JSON: {e.msg}", file=str(path), line=e.lineno, column=e.colno) from e
    except (OSError, UnicodeDecodeError) as e:
        raise GraphReadError(f"cannot read: {e}", file=str(path)) from e
    return from_dict(data, str(path))

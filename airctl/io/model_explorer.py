"""Write a graph as Model Explorer's graph JSON (``airctl dump --type model-explorer``).

Model Explorer (Google's ``ai-edge-model-explorer``) opens a ``.json`` file whose top level is a
``GraphCollection``: ``{"label", "graphs": [Graph]}``, the shape its web app's JSON loader
accepts (a bare ``{"graphs": [...]}`` is refused) and the fields of its
``model_explorer/graph_builder.py`` dataclasses (0.1.34)::

    Graph     {id, nodes, groupNodeConfigs, tasksData}
    GraphNode {id, label, namespace, attrs: [{key, value}], incomingEdges: [{sourceNodeId,
               sourceNodeOutputId, targetNodeInputId}], outputsMetadata: [{id, attrs}]}

How a TorchAir graph maps onto it:

- each node's ``namespace`` is its **stream** (``stream_1``; the default stream is the top level),
  so each stream is a group box, coloured by a ``groupNodeConfigs`` entry;
- data inputs are ``incomingEdges`` (``MatMul:0`` -> output ``0``); an FX ``wait``'s input from
  its ``record`` is one too;
- **control and sync edges** are kept twice: as the node attribute ``control_inputs`` /
  ``waits_on`` (``node_ids``, shown as links) and as the edge overlay "record/wait" (drawn as
  coloured arrows when the overlay is switched on), since Model Explorer has no edge kinds;
- ``attrs`` carries op, kind, stream, source line, module path and the node's attributes (JSON
  text); tensor shapes and dtypes go to ``outputsMetadata``.

>>> from airctl.graph.model import Graph, Node
>>> doc = to_model_explorer(Graph("g", "ge", [Node("a", "Data"), Node("b", "Abs", ["a:0"], stream="s1")]))
>>> [(n["id"], n["namespace"], n["incomingEdges"]) for n in doc["graphs"][0]["nodes"]]
[('a', '', []), ('b', 's1', [{'sourceNodeId': 'a', 'sourceNodeOutputId': '0', 'targetNodeInputId': '0'}])]
"""

from __future__ import annotations

import json
from typing import Any

from airctl.graph.model import Graph, Node

PALETTE = ("#fde7c8", "#d7ecfb", "#e4f5d6", "#f6dcef", "#e9e2fb", "#fbf3c4", "#d9f3ef", "#f9d9d9")
CONTROL_COLOUR = "#d33"


def _namespace(stream: str | None) -> str:
    return "" if stream is None else stream.replace("/", "_") or "_"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)


def _edge(ref: str, position: int) -> dict[str, str]:
    src = Node.producer(ref)
    head, sep, tail = ref.rpartition(":")
    output = tail if sep and tail.isdigit() else "0"
    return {"sourceNodeId": src, "sourceNodeOutputId": output, "targetNodeInputId": str(position)}


def _node(node: Node, graph: Graph, syncs: list[str]) -> dict[str, Any]:
    attrs: list[dict[str, Any]] = [{"key": "op", "value": node.op}, {"key": "kind", "value": node.kind}]
    if node.stream is not None:
        attrs.append({"key": "stream", "value": node.stream})
    for key in ("source", "module"):
        if getattr(node, key):
            attrs.append({"key": key, "value": getattr(node, key)})
    for key, value in node.attrs.items():
        attrs.append({"key": f"attr.{key}", "value": _text(value)})
    control = [Node.producer(r) for r in node.control_inputs if Node.producer(r) in graph]
    if control:
        attrs.append({"key": "control_inputs", "value": {"type": "node_ids", "nodeIds": control}})
    if syncs:
        attrs.append({"key": "waits_on", "value": {"type": "node_ids", "nodeIds": syncs}})
    edges = [_edge(ref, i) for i, ref in enumerate(node.inputs) if ref and Node.producer(ref) in graph]
    outputs = []
    for i, tensor in enumerate((node.meta.get("tensors") or []) if isinstance(node.meta, dict) else []):
        if isinstance(tensor, dict):
            outputs.append({"id": str(i), "attrs": [{"key": k, "value": _text(v)} for k, v in tensor.items()]})
    parts = node.op.split(".")
    label = parts[1] if graph.dialect == "fx" and len(parts) == 3 else node.op  # aten.mm.default -> mm
    return {"id": node.name, "label": label,
            "namespace": _namespace(node.stream), "attrs": attrs, "incomingEdges": edges,
            "outputsMetadata": outputs}


def to_model_explorer(graph: Graph, label: str | None = None) -> dict[str, Any]:
    """The graph as one Model Explorer ``GraphCollection`` (a JSON-able dict)."""
    syncs: dict[str, list[str]] = {}
    overlay: list[dict[str, Any]] = []
    for edge in graph.edges():
        if edge.kind in ("control", "sync"):
            if edge.kind == "sync":
                syncs.setdefault(edge.dst, []).append(edge.src)
            overlay.append({"sourceNodeId": edge.src, "targetNodeId": edge.dst,
                            "label": "wait" if edge.kind == "sync" else "control"})
    nodes = [_node(n, graph, syncs.get(n.name, [])) for n in graph.nodes]
    streams = [s for s in graph.streams() if s is not None]
    doc: dict[str, Any] = {"id": graph.name, "nodes": nodes}
    if streams:
        doc["groupNodeConfigs"] = [
            {"namespaceRegex": f"^{_regex(_namespace(s))}$", "backgroundColor": PALETTE[i % len(PALETTE)]}
            for i, s in enumerate(streams)]
    if overlay:
        doc["tasksData"] = {"edgeOverlaysDataListLeftPane": [{
            "name": "record/wait", "type": "edge_overlays",
            "overlays": [{"name": "control and sync edges", "edgeColor": CONTROL_COLOUR, "edges": overlay}]}]}
    return {"label": label or f"airctl: {graph.name} ({graph.dialect})", "graphs": [doc]}


def _regex(text: str) -> str:
    return "".join(f"\\{c}" if c in ".^$*+?{}[]\\|()" else c for c in text)


def write_model_explorer(graph: Graph) -> str:
    return json.dumps(to_model_explorer(graph), indent=1) + "\n"

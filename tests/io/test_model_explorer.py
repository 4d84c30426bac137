"""Model Explorer's graph JSON: the documented schema (model_explorer/graph_builder.py, 0.1.34), the web app's
JSON-loader rule, streams as groups, control and sync edges kept; and Model Explorer's own dataclasses read it."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any, Literal

import pytest

from airctl.io.model_explorer import to_model_explorer
from airctl.io.read import read_graph

REPO = Path(__file__).resolve().parents[2]
GE = next((REPO / "fixtures" / "imports" / "ma_txt" / "graph_dump").glob("dynamo_optimized_*.txt"))
FX = REPO / "fixtures" / "checks" / "ok" / "seed_docs.json"

# The dataclasses of model_explorer/graph_builder.py, field: type (None allowed where it says `| None`).
KV = {"key": str, "value": "attr"}
SCHEMA: dict[str, dict[str, Any]] = {
    "GraphCollection": {"label": str, "graphs": ["Graph"], "graphSorting": Literal[
        "node_count_desc", "node_count_asc", "name_asc", "name_desc"]},
    "Graph": {"id": str, "nodes": ["GraphNode"], "groupNodeAttributes": dict | None,
              "groupNodeConfigs": list | None, "nodeLabelsToHide": list | None, "tasksData": "TasksData?",
              "layoutConfigs": dict | None},
    "GraphNode": {"id": str, "label": str, "namespace": str, "subgraphIds": [str], "attrs": ["KeyValue"],
                  "incomingEdges": ["IncomingEdge"], "outputsMetadata": ["MetadataItem"],
                  "inputsMetadata": ["MetadataItem"], "style": dict | None, "config": dict | None},
    "IncomingEdge": {"sourceNodeId": str, "sourceNodeOutputId": str, "targetNodeInputId": str},
    "KeyValue": KV,
    "MetadataItem": {"id": str, "attrs": ["KeyValue"]},
    "GroupNodeConfig": {"namespaceRegex": str, "layoutDirection": int | None, "backgroundColor": str | None,
                        "borderColor": str | None, "textColor": str | None},
    "TasksData": {"edgeOverlaysDataListLeftPane": ["EdgeOverlaysData"],
                  "edgeOverlaysDataListRightPane": ["EdgeOverlaysData"]},
    "EdgeOverlaysData": {"name": str, "type": str, "overlays": ["EdgeOverlay"]},
    "EdgeOverlay": {"name": str, "edgeColor": str, "edges": ["Edge"], "edgeWidth": int | None,
                    "edgeLabelFontSize": float | None, "showEdgesConnectedToSelectedNodeOnly": bool | None},
    "Edge": {"sourceNodeId": str, "targetNodeId": str, "label": str | None},
}
REQUIRED = {"GraphCollection": {"label"}, "Graph": {"id"}, "GraphNode": {"id", "label"},
            "IncomingEdge": {"sourceNodeId"}, "KeyValue": {"key", "value"}, "MetadataItem": {"id"},
            "GroupNodeConfig": {"namespaceRegex"}, "EdgeOverlaysData": {"name"}, "EdgeOverlay": {"name", "edgeColor"},
            "Edge": {"sourceNodeId", "targetNodeId"}, "TasksData": set()}


def validate(value: Any, kind: Any, where: str = "$") -> None:
    """Strict, as dacite.Config(strict=True) reads it into the dataclasses: known keys, right types."""
    if kind == "attr":  # str or {"type": "node_ids", "nodeIds": [str]}
        if isinstance(value, dict):
            assert set(value) == {"type", "nodeIds"} and value["type"] == "node_ids", where
            assert all(isinstance(x, str) for x in value["nodeIds"]), where
        else:
            assert isinstance(value, str), where
        return
    if kind == "TasksData?":
        if value is not None:
            validate(value, "TasksData", where)
        return
    if isinstance(kind, str):
        assert isinstance(value, dict), where
        fields = SCHEMA[kind]
        assert set(value) <= set(fields), f"{where}: unknown keys {set(value) - set(fields)}"
        assert REQUIRED[kind] <= set(value), f"{where}: missing {REQUIRED[kind] - set(value)}"
        for key, sub in value.items():
            validate(sub, fields[key], f"{where}.{key}")
        return
    if isinstance(kind, list):
        assert isinstance(value, list), where
        for i, item in enumerate(value):
            validate(item, kind[0], f"{where}[{i}]")
        return
    if typing.get_origin(kind) is Literal:
        assert value in typing.get_args(kind), where
        return
    allowed = typing.get_args(kind) if isinstance(kind, types.UnionType) else (kind,)
    assert value is None if value is None else isinstance(value, tuple(a for a in allowed if a is not type(None))), \
        f"{where}: {value!r} is not {kind}"
    if value is None:
        assert type(None) in allowed, where


def web_app_accepts(doc: Any) -> bool:
    """The JSON loader of Model Explorer's web app (function `nk` of web_app/main-*.js, 0.1.34): a collection
    `{label, graphs}`, a list of `{label, subgraphs}` or a list of graphs; anything else is refused
    ("Unsupported JSON format")."""
    if isinstance(doc, dict):
        return doc.get("label") is not None and doc.get("graphs") is not None
    if isinstance(doc, list):
        return not doc or doc[0].get("subgraphs") is not None or (doc[0].get("id") is not None
                                                                  and doc[0].get("nodes") is not None)
    return False


def _check(doc: dict[str, Any]) -> dict[str, Any]:
    validate(json.loads(json.dumps(doc)), "GraphCollection")
    assert web_app_accepts(doc)
    (graph,) = doc["graphs"]
    ids = {n["id"] for n in graph["nodes"]}
    assert len(ids) == len(graph["nodes"])
    assert all(e["sourceNodeId"] in ids for n in graph["nodes"] for e in n["incomingEdges"])
    for pane in (graph.get("tasksData") or {}).get("edgeOverlaysDataListLeftPane", []):
        for overlay in pane["overlays"]:
            assert all(e["sourceNodeId"] in ids and e["targetNodeId"] in ids for e in overlay["edges"])
    return graph


def test_ge_graph_streams_are_groups_and_control_edges_are_kept() -> None:
    graph = _check(to_model_explorer(read_graph(GE)))
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert nodes["MatMul"]["namespace"] == "stream_1" and nodes["Sub"]["namespace"] == ""
    assert [c["namespaceRegex"] for c in graph["groupNodeConfigs"]] == ["^stream_1$"]
    assert {"key": "control_inputs", "value": {"type": "node_ids", "nodeIds": ["Abs"]}} in nodes["Sub"]["attrs"]
    (overlay,) = graph["tasksData"]["edgeOverlaysDataListLeftPane"][0]["overlays"]
    assert overlay["edges"] == [{"sourceNodeId": "Abs", "targetNodeId": "Sub", "label": "control"}]
    assert [(e["sourceNodeId"], e["sourceNodeOutputId"], e["targetNodeInputId"])
            for e in nodes["Sub"]["incomingEdges"]] == [("arg0_1", "0", "0"), ("MatMul", "0", "1")]


def test_fx_graph_sync_edges_and_tensor_metadata() -> None:
    graph = _check(to_model_explorer(read_graph(FX)))
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert nodes["mm"]["namespace"] == "stream_1" and nodes["mm"]["label"] == "mm"
    assert {"key": "waits_on", "value": {"type": "node_ids", "nodeIds": ["record_default"]}} in \
        nodes["wait_default"]["attrs"]
    edges = graph["tasksData"]["edgeOverlaysDataListLeftPane"][0]["overlays"][0]["edges"]
    assert {"sourceNodeId": "record_default", "targetNodeId": "wait_default", "label": "wait"} in edges
    assert nodes["mm"]["outputsMetadata"] == [{"id": "0", "attrs": [{"key": "shape", "value": "[3, 3]"},
                                                                   {"key": "dtype", "value": "float32"}]}]


def test_dump_type_model_explorer_from_a_ledger_stage(tmp_path: Path) -> None:
    from airctl.pipeline.dump import dump_source

    out = tmp_path / "g.json"
    result = dump_source(GE, "model-explorer", out=out)
    assert result.written == out
    _check(json.loads(out.read_text()))


def test_model_explorer_own_dataclasses_read_it_strictly() -> None:
    """Model Explorer's own ``graph_builder`` dataclasses, read with ``dacite`` strict as its JSON loader reads
    a graph (scripts/setup.sh installs both without their dependencies: the package's ``__init__`` starts
    its server, so ``graph_builder.py`` is loaded by its path)."""
    import importlib.util
    import sys

    package = importlib.util.find_spec("model_explorer")
    if package is None or importlib.util.find_spec("dacite") is None:
        pytest.fail("ai-edge-model-explorer and dacite are not installed: run `bash scripts/setup.sh`")
    import dacite

    (folder,) = package.submodule_search_locations or [None]
    spec = importlib.util.spec_from_file_location("_model_explorer_graph_builder",
                                                  Path(folder) / "graph_builder.py")
    gb = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = gb  # its dataclasses resolve their own names through it
    try:
        spec.loader.exec_module(gb)
        for source in (GE, FX):
            graph = read_graph(source)
            collection = dacite.from_dict(gb.GraphCollection, to_model_explorer(graph),
                                          config=dacite.Config(strict=True))
            (read,) = collection.graphs
            assert [n.id for n in read.nodes] == [n.name for n in graph.nodes]  # every node, in order
    finally:
        del sys.modules[spec.name]

"""Read a ledger (docs/ledger.md) into the viewer's payload: run facts, graphs with their stages,
findings, and the profile summary when ``airctl profile`` left one.

The ledger is read through :class:`~airctl.ledger.reader.Ledger`; each graph opens on its default
``report.html`` stage (:func:`~airctl.ledger.defaults.default_stage`: the user's passes' last stage,
else the final FX graph), with the lane pane beside the graph when that stage has streams.

Each snapshot file is read once, however many stages share it (the ledger is content-addressed),
and not at all when the caller has the graph in memory (the ledger writer, at the end of a run);
a stage whose file is missing or unreadable stays in the list, marked, so a crashed run still
gets a report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from airctl.diff.chain_graphs import Snapshots
from airctl.errors import AirctlError
from airctl.graph.model import Graph
from airctl.ledger.defaults import Request
from airctl.ledger.index import GraphEntry, StageEntry, StageRef
from airctl.ledger.reader import Ledger
from airctl.modes import Mode
from airctl.report.ahead import Ahead, worth_forking
from airctl.report.payload import Group, empty_diff
from airctl.report.provenance_data import assignment_payload, provenance_payload
from airctl.why import why_table

PAIRS = "_pairs"  # graphs_payload's key of the FX stages' matches, for the provenance
RUN_FIELDS = ("run_id", "created", "status", "command", "backend", "mode", "model", "passes", "execution",
              "error", "error_detail", "timings", "findings")


def graph_entry(info: GraphEntry, stages: list[tuple[StageEntry, Graph | None, str]], groups: list[Group],
                open_at: int | None = None, mode: Mode = Mode.MAX_AUTOTUNE,
                ahead: Ahead | None = None) -> dict[str, Any]:
    """One graph's stage list; ``stages`` holds (index.json stage entry, graph or None, snapshot key);
    ``open_at``: the position of the stage the viewer opens on; ``mode``: the run's (for the lane view);
    ``ahead``: the snapshots' lane views and program orders, worked out in a child (report/ahead.py)."""
    by_kind: dict[str, int] = {}  # "fx", "ge", and "dynamo": Dynamo's graph is not AOT's, nor laid out with it
    seen: dict[str, tuple[int, int]] = {}  # snapshot key -> (group, snap)
    out_stages = []
    last: tuple[int, int] | None = None
    for entry, graph, key in stages:
        row: dict[str, Any] = {k: entry.value(k) for k in ("index", "name", "changed", "nodes", "node_delta",
                                                            "seconds", "dialect")}
        if graph is None:
            row.update(group=None, snap=None, diff=None, missing=True)
            out_stages.append(row)
            continue
        diff: dict[str, Any] | None
        if key in seen and last == seen[key]:  # an unchanged pass: the same snapshot, an empty diff
            g, snap = seen[key]
            diff = empty_diff()
        else:  # a graph not seen, or seen before the stage just shown (the ledger shares its file)
            kind = "dynamo" if entry.name == "dynamo" else graph.dialect
            g = by_kind.get(kind)
            if g is None:
                g = by_kind[kind] = len(groups)
                groups.append(Group(info.id, graph.dialect, mode=mode, ahead=ahead))
            snap, diff = groups[g].add(graph, key=key)
            seen[key] = (g, snap)
        row.update(group=g, snap=snap, diff=diff)
        out_stages.append(row)
        last = (g, snap)
    return {"id": info.id, "kind": info.kind, "name": info.name, "stages": out_stages, "open": open_at}


def ledger_payload(ledger: Ledger, known: Mapping[str, Graph] | None = None,
                   graphs_part: dict[str, Any] | None = None) -> dict[str, Any]:
    """The viewer's payload; ``known`` snapshots (file -> graph) are used instead of reading the file;
    ``graphs_part``: :func:`graphs_payload` of this ledger's graphs, made earlier (not made again).
    The provenance reuses the snapshots read and the FX stages matched for the graphs' diffs."""
    index = ledger.index
    run = index.to_json()
    loaded: dict[str, Graph | None] = {}
    part = dict(graphs_part) if graphs_part is not None else graphs_payload(ledger, known, loaded)
    read = {file: g for file, g in loaded.items() if g is not None}
    snaps = Snapshots(ledger, {**read, **(known or {})}, part.pop(PAIRS, {}))
    return {
        "title": f"airctl {index.command or 'run'}: {index.run_id or ledger.root.name}",
        "run": {k: run[k] for k in RUN_FIELDS if k in run},
        **part,
        "findings": list(index.findings),
        "why": _why(index),
        "provenance": provenance_payload(ledger, snaps),
        "assignment": assignment_payload(ledger, snaps),
    }


def _why(index: Any) -> dict[str, Any]:
    """``airctl why``'s table for the Run tab (rows without their recorded detail: the index has it)."""
    table = why_table(index).to_json()
    table["rows"] = [{k: v for k, v in row.items() if k != "detail"} for row in table["rows"]]
    return table


def graphs_key(ledger: Ledger) -> str:
    """What :func:`graphs_payload` depends on in the index: every graph and its stage entries."""
    return json.dumps([g.to_json() for g in ledger.index.graphs], sort_keys=True, default=str)


def graphs_payload(ledger: Ledger, known: Mapping[str, Graph] | None = None,
                   cache: dict[str, Graph | None] | None = None) -> dict[str, Any]:
    """The payload's ``graphs`` and ``groups``: each graph's stages, their layouts and diffs (the costly
    part of the report, fixed once the compile has made its last stage), and under :data:`PAIRS` the
    FX snapshots' matched node names (not part of the page: :func:`ledger_payload` takes them out);
    ``cache`` (file -> graph) receives the snapshots read."""
    index = ledger.index
    groups: list[Group] = []
    graphs = []
    cache = {} if cache is None else cache
    known = known or {}
    pane = None
    mode = index.run_mode or Mode.MAX_AUTOTUNE
    ahead = _ahead(ledger, known, mode)
    for info in index.graphs:
        stages = []
        for ref in ledger.stages(info.id):
            if ref.file not in cache:
                cache[ref.file] = _snapshot(ledger, known, ref)
            stages.append((ref.entry, cache[ref.file], ref.file))
        opened = ledger.default_stage(Request.REPORT, info.id)
        at = next((k for k, s in enumerate(info.stages) if opened is not None and s is opened.entry), None)
        graphs.append(graph_entry(info, stages, groups, at, mode, ahead))
        shown = cache.get(opened.file) if opened is not None else None
        if pane is None and shown is not None and any(n.stream for n in shown.nodes):
            pane = "both"  # the run has streams: the lane view, the best view of a stream plan, opens beside
    pairs = {key: names for g in groups for key, names in g.pairs.items()}
    return {"graphs": graphs, "groups": [g.to_json() for g in groups], "pane": pane, PAIRS: pairs}


def _ahead(ledger: Ledger, known: Mapping[str, Graph], mode: Mode) -> Ahead | None:
    """A child working out every snapshot's lane view and program order, when the ledger is big enough."""
    refs = {ref.file: ref for info in ledger.index.graphs for ref in ledger.stages(info.id)}
    if not worth_forking(ref.entry.nodes for ref in refs.values()):
        return None
    return Ahead([(file, lambda ref=ref: _snapshot(ledger, known, ref)) for file, ref in refs.items()], mode)


def _snapshot(ledger: Ledger, known: Mapping[str, Graph], stage: StageRef) -> Graph | None:
    """The stage's snapshot: the caller's copy in memory, else read (None when it cannot be)."""
    graph = known.get(stage.file)
    return graph if graph is not None else _load(ledger, stage)


def _load(ledger: Ledger, stage: StageRef) -> Graph | None:
    """The stage's snapshot, or None when it is missing, unreadable or outside the ledger."""
    try:
        return ledger.load(stage, keep_refs=True)  # read as is: its reference table goes to the report's pin
    except (AirctlError, OSError, ValueError):
        return None


def read_profile(root: Path) -> dict[str, Any] | None:
    """``profile/summary.json`` (written by ``airctl profile``), or None when absent or unreadable."""
    path = root / "profile" / "summary.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"error": "profile/summary.json is not valid JSON"}
    return data if isinstance(data, dict) else {"error": "profile/summary.json is not an object"}

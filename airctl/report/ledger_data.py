"""Read a ledger (docs/ledger.md) into the viewer's payload: run facts, graphs with their stages,
findings, and the profile summary when ``airctl profile`` left one.

Each snapshot file is read once, however many unchanged passes share it; a stage whose file is
missing or unreadable stays in the list, marked, so a crashed run still gets a report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.graph.model import Graph
from airctl.io.json_io import read_json
from airctl.report.payload import Group

RUN_FIELDS = ("run_id", "created", "status", "command", "backend", "mode", "model", "passes", "execution",
              "error", "error_detail", "timings")


def graph_entry(graph_id: str, info: dict[str, Any], stages: list[tuple[dict[str, Any], Graph | None, str]],
                groups: list[Group]) -> dict[str, Any]:
    """One graph's stage list; ``stages`` holds (index.json stage entry, graph or None, snapshot key)."""
    by_dialect: dict[str, int] = {}
    seen: dict[str, tuple[int, int]] = {}  # snapshot key -> (group, snap)
    out_stages = []
    last: tuple[int, int] | None = None
    for entry, graph, key in stages:
        row: dict[str, Any] = {k: entry.get(k) for k in ("index", "name", "changed", "nodes", "node_delta",
                                                          "seconds", "dialect")}
        if graph is None:
            row.update(group=None, snap=None, diff=None, missing=True)
            out_stages.append(row)
            continue
        if key in seen:
            g, snap = seen[key]
            diff: dict[str, Any] | None = None
            if last == (g, snap):
                diff = {"added": [], "removed": [], "changed": [], "edges_added": [], "edges_removed": [],
                        "summary": {"added": 0, "removed": 0, "changed": 0, "edges_added": 0, "edges_removed": 0,
                                    "renamed": 0}}
        else:
            g = by_dialect.get(graph.dialect)
            if g is None:
                g = by_dialect[graph.dialect] = len(groups)
                groups.append(Group(graph_id, graph.dialect))
            snap, diff = groups[g].add(graph)
            seen[key] = (g, snap)
        row.update(group=g, snap=snap, diff=diff)
        out_stages.append(row)
        last = (g, snap)
    return {"id": graph_id, "kind": info.get("kind"), "name": info.get("name"), "stages": out_stages}


def ledger_payload(root: Path, index: dict[str, Any]) -> dict[str, Any]:
    groups: list[Group] = []
    graphs = []
    cache: dict[str, Graph | None] = {}
    for info in index.get("graphs") or []:
        stages = []
        for entry in info.get("stages") or []:
            file = str(entry.get("file") or "")
            if file not in cache:
                cache.clear()  # files are shared only by consecutive stages
                cache[file] = _load(root, file)
            stages.append((entry, cache[file], file))
        graphs.append(graph_entry(str(info.get("id")), info, stages, groups))
    return {
        "title": f"airctl {index.get('command') or 'run'}: {index.get('run_id') or root.name}",
        "run": {k: index.get(k) for k in RUN_FIELDS if k in index},
        "graphs": graphs,
        "groups": [g.to_json() for g in groups],
        "findings": list(index.get("findings") or []),
    }


def _load(root: Path, file: str) -> Graph | None:
    if not file:
        return None
    path = (root / file).resolve()
    if root.resolve() not in path.parents or not path.is_file():
        return None
    try:
        return read_json(path)
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

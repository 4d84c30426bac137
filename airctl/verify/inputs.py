"""What ``airctl check PATH`` can read, turned into graphs to verify.

PATH is one of: an airctl graph JSON; a ledger folder (``index.json``; by default the last FX stage
of every graph, or ``--stage NAME``); a TorchAir dump (``.pbtxt``/``.txt``/``.py``, read by
``airctl.io.read.read_graph``). A model script is compiled first by :mod:`airctl.pipeline.source`.
Every unreadable input raises :class:`~airctl.errors.GraphReadError` with the file (and line
where the format has one), which the CLI maps to exit code 2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from airctl.errors import GraphReadError
from airctl.graph.model import Graph
from airctl.ledger.reader import stage_path

DUMP_SUFFIXES = (".pbtxt", ".txt")  # and TorchAir's .py dumps, told apart from model scripts by content


@dataclass
class CheckTarget:
    label: str  # printed with the findings: the file, or "<ledger graph id>/<stage>"
    graph: Graph
    mode: str | None = None  # the mode the ledger was compiled with, when it says


def load_targets(path: Path | str, *, stage: str | None = None) -> list[CheckTarget]:
    path = Path(path)
    if not path.exists():
        raise GraphReadError("no such file or folder", file=str(path))
    if path.is_dir():
        return ledger_targets(path, stage)
    suffix = path.suffix.lower()
    if suffix == ".json":
        return [CheckTarget(str(path), read_graph_file(path))]
    if suffix in DUMP_SUFFIXES:
        return [CheckTarget(str(path), read_graph_file(path))]
    if suffix == ".py":
        if _is_py_dump(path):
            return [CheckTarget(str(path), read_graph_file(path))]
        raise GraphReadError("a model script is not a graph", file=str(path),
                             hint="compile it first (`airctl compile`), then check the ledger folder")
    raise GraphReadError(f"cannot tell what {path.suffix or 'this file'} is", file=str(path),
                         hint="pass an airctl graph .json, a ledger folder, a TorchAir .pbtxt/.txt dump or a model .py")


def read_graph_file(path: Path) -> Graph:
    """A graph file (airctl .json, TorchAir .pbtxt/.txt/.py dump), read and validated as ``airctl
    dump``/``diff`` read it: same errors, with file and line."""
    from airctl.io.read import read_graph

    return read_graph(path)


def _is_py_dump(path: Path) -> bool:
    from airctl.io.py_dump import is_torchair_py_dump

    try:
        return is_torchair_py_dump(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


def ledger_targets(root: Path, stage: str | None) -> list[CheckTarget]:
    index_path = root / "index.json"
    if not index_path.is_file():
        raise GraphReadError("not a ledger folder: no index.json", file=str(root),
                             hint="pass the run folder that `airctl compile` printed")
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise GraphReadError(f"corrupt index.json: {e.msg}", file=str(index_path), line=e.lineno,
                             column=e.colno) from e
    graphs = index.get("graphs") if isinstance(index, dict) else None
    if not isinstance(graphs, list):
        raise GraphReadError("index.json has no 'graphs' list", file=str(index_path), line=1)
    mode = index.get("mode") or (index.get("config") or {}).get("mode")
    targets: list[CheckTarget] = []
    for g in graphs:
        stages = [s for s in g.get("stages") or [] if isinstance(s, dict) and s.get("file")]
        gid = str(g.get("id", g.get("name", "graph")))
        if stage is not None:
            chosen = [s for s in stages if s.get("name") == stage or str(s.get("index")) == stage]
            if not chosen:
                names = ", ".join(str(s.get("name")) for s in stages)
                raise GraphReadError(f"graph {gid} has no stage {stage!r}", file=str(index_path),
                                     hint=f"stages are: {names}")
            s = chosen[-1]
            graph = read_graph_file(stage_path(root, s["file"], s.get("name")))
            targets.append(CheckTarget(f"{gid}/{s.get('name')}", graph, mode))
            continue
        final = [s for s in stages if s.get("name") == "fx-final"]
        # fx-final is the graph TorchAir converts; the aclgraph passes after it add TorchAir's own closure
        # events, which the verifier models itself. Without fx-final (a failed run): the last FX stage.
        for s in final or list(reversed(stages)):
            if s.get("dialect") == "ge" or str(s.get("name", "")).startswith("ge-"):
                continue
            graph = read_graph_file(stage_path(root, s["file"], s.get("name")))
            if graph.dialect == "fx":
                targets.append(CheckTarget(f"{gid}/{s.get('name')}", graph, mode))
                break
    if not targets:
        raise GraphReadError("the ledger holds no FX stage to check", file=str(index_path),
                             hint="use --stage NAME to pick a stage")
    return targets

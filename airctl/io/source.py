"""Resolve a command's SOURCE argument (a graph file, a TorchAir dump, or a ledger stage) to a graph.

``airctl dump`` and ``airctl diff`` accept the same sources:

- a graph file: TorchAir ``.pbtxt``/``.txt``/``.py`` dump or airctl ``.json`` (:func:`read_graph`);
- a ledger folder (has ``index.json``, see docs/ledger.md): a stage picked by name or index,
  default the last stage of the first graph;
- a ``.py`` *model script* (told apart from a TorchAir py dump by content, :func:`is_model_script`)
  is not a graph: :mod:`airctl.pipeline.source` compiles it first, then reads the ledger.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl.errors import GraphReadError, LedgerError
from airctl.graph.model import Graph
from airctl.io.py_dump import is_torchair_py_dump
from airctl.io.read import read_graph
from airctl.ledger.reader import stage_path

INDEX = "index.json"


@dataclass(frozen=True)
class Stage:
    """One stage of a ledger: where it is and its index.json entry."""

    graph_id: str
    index: int
    name: str
    file: str
    text: str | None


def ledger_stages(root: Path) -> list[tuple[str, list[Stage]]]:
    """``[(graph_id, [Stage, ...]), ...]`` from a ledger's ``index.json``."""
    index_path = root / INDEX
    try:
        index: Any = json.loads(index_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise LedgerError(f"corrupt {INDEX}: {e.msg}", file=str(index_path), line=e.lineno, column=e.colno) from e
    except (OSError, UnicodeDecodeError) as e:
        raise LedgerError(f"cannot read {INDEX}: {e}", file=str(index_path)) from e
    graphs = index.get("graphs") if isinstance(index, dict) else None
    if not isinstance(graphs, list):
        raise LedgerError(f"{INDEX} has no 'graphs' list", file=str(index_path))
    out = []
    for g in graphs:
        try:
            stages = [Stage(str(g["id"]), int(s["index"]), str(s["name"]), str(s["file"]), s.get("text"))
                      for s in g.get("stages", [])]
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise LedgerError(f"malformed graph entry in {INDEX}: {e}", file=str(index_path)) from e
        for stage in stages:  # a ledger is data: its paths must stay inside it
            stage_path(root, stage.file, stage.name)
        out.append((str(g.get("id")), stages))
    return out


def find_stage(root: Path, name: str | None = None, default: str = "last") -> Stage:
    """A stage by name or index (first graph first, then the others); default the first/last stage."""
    graphs = ledger_stages(root)
    if not graphs or not graphs[0][1]:
        raise LedgerError("the ledger has no graph stages (the run failed before Dynamo produced a graph)",
                          file=str(root / INDEX))
    if name is None:
        stages = graphs[0][1]
        return stages[0] if default == "first" else stages[-1]
    if name.lstrip("-").isdigit() and name.startswith("-"):  # -1: the last stage of the first graph
        first = graphs[0][1]
        if -len(first) <= int(name) < 0:
            return first[int(name)]
    for _gid, stages in graphs:
        for stage in stages:
            if stage.name == name or (name.isdigit() and stage.index == int(name)) \
                    or f"{stage.graph_id}/{stage.name}" == name:
                return stage
    first = graphs[0][1]
    names = ", ".join(f"{s.index} {s.name}" for s in first)
    raise LedgerError(f"no stage {name!r} in the ledger", file=str(root / INDEX),
                      hint=f"give a name or index (negative counts from the end) of graph {graphs[0][0]}: {names}")


def is_ledger(path: Path) -> bool:
    return path.is_dir() and (path / INDEX).is_file()


def is_model_script(path: Path | str) -> bool:
    """A ``.py`` file that is not a TorchAir py dump: a model script, to be compiled first."""
    path = Path(path)
    return path.suffix == ".py" and path.is_file() and not _py_dump(path)


def load_source(source: Path | str, stage: str | None = None, default: str = "last") -> Graph:
    """The graph a SOURCE argument names (see the module docstring)."""
    path = Path(source)
    if is_model_script(path):
        raise GraphReadError("a model script is not a graph", file=str(path),
                             hint="compile it first (`airctl compile`), then pass the ledger folder")
    if path.is_dir():
        if not is_ledger(path):
            raise LedgerError(f"not a ledger: no {INDEX}", file=str(path),
                              hint="pass a graph file, or the run folder `airctl compile` printed")
        found = find_stage(path, stage, default)
        return read_graph(path / found.file)
    if stage is not None:
        raise GraphReadError("--stage/--from/--to need a ledger folder", file=str(path),
                             hint="a single graph file has no stages")
    if not path.exists():
        raise GraphReadError("no such file", file=str(path))
    return read_graph(path)


def _py_dump(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True  # let read_graph report the error with its usual wording
    return is_torchair_py_dump(text)

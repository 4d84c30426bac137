"""Open a ledger folder written by :mod:`airctl.ledger.writer` and load its stages.

>>> led = Ledger.open("airctl-runs/<run-id>")              # doctest: +SKIP
>>> stage = led.find_stage("fx-final")                      # doctest: +SKIP
>>> graph = led.load(stage)                                 # doctest: +SKIP
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl.errors import LedgerError
from airctl.graph.model import Graph
from airctl.io.json_io import read_json
from airctl.ledger.writer import INDEX


@dataclass(frozen=True)
class StageRef:
    graph_id: str
    index: int
    name: str
    file: str
    data: dict[str, Any]


class Ledger:
    def __init__(self, root: Path, index: dict[str, Any]) -> None:
        self.root = root
        self.index = index

    @staticmethod
    def is_ledger(path: Path | str) -> bool:
        return (Path(path) / INDEX).is_file()

    @classmethod
    def open(cls, path: Path | str) -> Ledger:
        root = Path(path)
        index_path = root / INDEX
        if not index_path.is_file():
            raise LedgerError(f"not a ledger: no {INDEX}", file=str(root),
                              hint="pass the run folder that `airctl compile` printed (airctl-runs/<run-id>)")
        try:
            index = json.loads(index_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise LedgerError(f"corrupt {INDEX}: {e.msg}", file=str(index_path), line=e.lineno, column=e.colno) from e
        return cls(root, index)

    def graph_ids(self) -> list[str]:
        return [g["id"] for g in self.index.get("graphs", [])]

    def stages(self, graph_id: str | None = None) -> list[StageRef]:
        out = []
        for g in self.index.get("graphs", []):
            if graph_id is not None and g["id"] != graph_id:
                continue
            for s in g.get("stages", []):
                out.append(StageRef(g["id"], s["index"], s["name"], s["file"], s))
        return out

    def find_stage(self, name: str | None = None, graph_id: str | None = None) -> StageRef:
        """A stage by name (or ``NNN`` index); default: the final FX stage of the first graph."""
        ids = [graph_id] if graph_id else self.graph_ids()
        if not ids:
            raise LedgerError("the ledger has no graphs (the run failed before Dynamo produced one)",
                              file=str(self.root / INDEX))
        candidates = self.stages(ids[0])
        if name is None:
            fx = [s for s in candidates if s.data.get("dialect") == "fx"]
            return (fx or candidates)[-1]
        for s in candidates:
            if s.name == name or (name.isdigit() and s.index == int(name)):
                return s
        names = ", ".join(s.name for s in candidates)
        raise LedgerError(f"no stage {name!r} in graph {ids[0]}", file=str(self.root / INDEX),
                          hint=f"stages are: {names}")

    def load(self, stage: StageRef) -> Graph:
        return read_json(self.root / stage.file)


def stage_path(root: Path, file: str, stage: str | None = None) -> Path:
    """``root / file`` for a stage file named in index.json, refusing paths that leave the ledger."""
    rel = Path(str(file))
    if rel.is_absolute() or ".." in rel.parts:
        which = f"stage {stage!r}" if stage else "a stage file"
        raise LedgerError(f"{which} points outside the ledger: {file!r}", file=str(root / INDEX),
                          hint="stage files are relative paths under the ledger folder")
    return root / rel

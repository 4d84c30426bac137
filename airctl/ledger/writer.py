"""Write a ledger as a run goes, so an interrupted or failed run keeps what it captured.

Layout (a contract: tests and other tools read it; documented in docs/ledger.md)::

    <out>/<run-id>/                        never overwrites an earlier run
      index.json                           rewritten after every stage
      graphs/<graph-id>/<NNN>-<stage>.json airctl graph model (airctl.io.json_io)
      graphs/<graph-id>/<NNN>-<stage>.txt  readable FX code, or GE op listing
      torchair/                            TorchAir's own dumps and generated code, as it named them
      log.txt                              TorchAir's and airctl's log of the run
      report.html                          single-file viewer (written at the end, if available)
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any

from airctl import __version__
from airctl.graph.model import Graph
from airctl.io.json_io import write_json

INDEX = "index.json"


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "stage"


def new_run_id(label: str) -> str:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{slug(label)[:40]}-{secrets.token_hex(2)}"


class LedgerWriter:
    """Accumulates ``index.json`` and the stage files of one run."""

    def __init__(self, root: Path, index: dict[str, Any]) -> None:
        self.root = root
        self.index = index
        self._graphs: dict[str, dict[str, Any]] = {}
        self._started = time.perf_counter()

    @classmethod
    def create(cls, out_dir: Path | str, label: str, **fields: Any) -> LedgerWriter:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        while True:
            run_id = new_run_id(label)
            root = out / run_id
            try:
                root.mkdir()
                break
            except FileExistsError:
                continue
        (root / "graphs").mkdir()
        (root / "torchair").mkdir()
        index: dict[str, Any] = {
            "format": "airctl-ledger",
            "version": 1,
            "airctl_version": __version__,
            "run_id": run_id,
            "created": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
            "status": "running",
            "command": None,
            "backend": None,
            "mode": None,
            "model": None,
            "graphs": [],
            "dumps": [],
            "findings": [],
            "execution": None,
            "timings": {},
            "error": None,
            "error_detail": None,
            "log": "log.txt",
            "report": None,
        }
        index.update(fields)
        writer = cls(root, index)
        writer.flush()
        return writer

    # -- graphs and stages --------------------------------------------------------------------
    def graph(self, graph_id: str, kind: str, **fields: Any) -> dict[str, Any]:
        entry = self._graphs.get(graph_id)
        if entry is None:
            entry = {"id": graph_id, "kind": kind, "name": None, "stages": []}
            entry.update(fields)
            self._graphs[graph_id] = entry
            self.index["graphs"].append(entry)
            (self.root / "graphs" / slug(graph_id)).mkdir(parents=True, exist_ok=True)
        else:
            entry.update({k: v for k, v in fields.items() if v is not None})
        return entry

    def stages(self, graph_id: str) -> list[dict[str, Any]]:
        """The stages recorded so far for ``graph_id`` (empty for an unknown graph)."""
        entry = self._graphs.get(graph_id)
        return list(entry["stages"]) if entry else []

    def graph_kind(self, graph_id: str) -> str:
        return str(self._graphs[graph_id]["kind"])

    def add_stage(
        self,
        graph_id: str,
        name: str,
        graph: Graph,
        *,
        text: str | None = None,
        changed: bool | None = None,
        seconds: float | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        entry = self._graphs[graph_id]
        stages = entry["stages"]
        index = len(stages)
        if changed is False and stages and stages[-1]["dialect"] == graph.dialect:
            # an unchanged pass shares its predecessor's snapshot files
            file, text_file = stages[-1]["file"], stages[-1]["text"]
        else:
            base = f"graphs/{slug(graph_id)}/{index:03d}-{slug(name.replace(':', '_'))}"
            write_json(graph, self.root / f"{base}.json")
            file, text_file = f"{base}.json", None
            if text is not None:
                (self.root / f"{base}.txt").write_text(text, encoding="utf-8")
                text_file = f"{base}.txt"
        previous = stages[-1]["nodes"] if stages else None
        stage = {
            "index": index,
            "name": name,
            "dialect": graph.dialect,
            "changed": changed,
            "nodes": len(graph),
            "node_delta": None if previous is None else len(graph) - previous,
            "file": file,
            "text": text_file,
            "seconds": seconds,
        }
        stage.update(extra)
        stages.append(stage)
        self.flush()
        return stage

    def add_dump(self, path: Path, **fields: Any) -> None:
        rel = os.path.relpath(path, self.root)
        if any(d["file"] == rel for d in self.index["dumps"]):
            return
        entry = {"file": rel}
        entry.update(fields)
        self.index["dumps"].append(entry)
        self.flush()

    # -- run-level fields ---------------------------------------------------------------------
    def set(self, **fields: Any) -> None:
        self.index.update(fields)
        self.flush()

    def fail(self, message: str, detail: dict[str, Any] | None = None) -> None:
        self.index["status"] = "failed"
        self.index["error"] = message
        self.index["error_detail"] = detail
        self.flush()

    def finish(self, status: str | None = None) -> None:
        if status:
            self.index["status"] = status
        elif self.index["status"] == "running":
            self.index["status"] = "ok"
        self.index["timings"]["total_seconds"] = round(time.perf_counter() - self._started, 3)
        self.flush()

    def flush(self) -> None:
        tmp = self.root / (INDEX + ".tmp")
        tmp.write_text(json.dumps(self.index, indent=1, default=str), encoding="utf-8")
        tmp.replace(self.root / INDEX)

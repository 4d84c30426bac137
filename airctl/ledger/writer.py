"""Write a ledger as a run goes, so an interrupted or failed run keeps what it captured.

The one writer of ``index.json``: it holds the run's :class:`~airctl.ledger.index.RunIndex` and
rewrites the file atomically after every change. Layout (a contract: tests and other tools read
it; documented in docs/ledger.md)::

    <out>/<run-id>/                        never overwrites an earlier run
      index.json                           rewritten after every stage
      graphs/<graph-id>/<NNN>-<stage>.json airctl graph model (airctl.io.json_io)
      graphs/<graph-id>/<NNN>-<stage>.txt  readable FX code, or GE op listing
      torchair/                            TorchAir's own dumps and generated code, as it named them
      log.txt                              TorchAir's and airctl's log of the run
      report.html                          single-file viewer (written at the end, if available)
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any

from airctl import __version__
from airctl.errors import LedgerError
from airctl.graph.model import Graph
from airctl.io.json_io import write_json
from airctl.ledger.index import DumpEntry, GraphEntry, RunIndex, StageEntry
from airctl.ledger.record import INDEX
from airctl.ledger.runs import mark_latest

RESERVE = 4096  # bytes an index.json takes at least: room for an in-place rewrite (LedgerWriter.flush)

__all__ = ["INDEX", "LedgerWriter", "new_run_id", "slug"]


def cannot_write(root: Path, error: OSError) -> LedgerError:
    return LedgerError(f"cannot write the ledger ({error.strerror or error}): {error.filename or root}",
                       file=str(root), hint="free space on the disk that holds it (df -h), or give another --out; "
                                            "what was written before is kept")


def _essential(data: dict[str, Any], minimal: bool = False) -> dict[str, Any]:
    """The index with what a full disk can spare dropped: per-stage extras and the findings list
    (``minimal``: also every run-level field but the status and the error, and stages but their files)."""
    keep = ("index", "name", "file") if minimal else ("index", "name", "dialect", "changed", "nodes", "file", "text")
    graphs = [{"id": g.get("id"), "kind": g.get("kind"), "stages": [{k: s[k] for k in keep if k in s}
                                                                   for s in g.get("stages", [])]}
              for g in data.get("graphs", [])]
    if minimal:
        top = ("format", "version", "run_id", "created", "status", "command", "mode", "error")
        return {**{k: data.get(k) for k in top}, "graphs": graphs, "truncated_by_full_disk": True}
    return {**data, "graphs": graphs, "findings": [], "truncated_by_full_disk": True}


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "stage"


def new_run_id(label: str) -> str:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{slug(label)[:40]}-{secrets.token_hex(2)}"


class LedgerWriter:
    """Accumulates the run index and the stage files of one run; every change is flushed."""

    def __init__(self, root: Path, run_index: RunIndex) -> None:
        self.root = root
        self.run_index = run_index
        self._started = time.perf_counter()

    @classmethod
    def create(cls, out_dir: Path | str, label: str, **fields: Any) -> LedgerWriter:
        """A new run folder under ``out_dir`` (never an existing one); ``fields`` are run-level keys."""
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
        return cls._start(root, run_id, fields)

    @classmethod
    def create_at(cls, root: Path | str, run_id: str | None = None, **fields: Any) -> LedgerWriter:
        """A new ledger in exactly ``root`` (a multi-rank run's ``ranks/<rank>``), which must not
        exist yet or be empty; ``run_id`` defaults to the folder name."""
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        if any(root.iterdir()):
            raise FileExistsError(f"{root} is not empty: a ledger is never written over another")
        return cls._start(root, run_id or root.name, fields)

    @classmethod
    def _start(cls, root: Path, run_id: str, fields: dict[str, Any]) -> LedgerWriter:
        (root / "graphs").mkdir()
        (root / "torchair").mkdir()
        index = RunIndex(
            airctl_version=__version__, run_id=run_id,
            created=_dt.datetime.now().astimezone().isoformat(timespec="milliseconds"),
            status="running", graphs=[], log="log.txt",
        )
        index.update(fields)
        writer = cls(root, index)
        writer.flush()
        return writer

    def graph(self, graph_id: str, kind: str, **fields: Any) -> GraphEntry:
        """The graph's entry, created on first use; later calls update the fields given non-None."""
        entry = self.run_index.graph(graph_id)
        if entry is None:
            entry = GraphEntry(id=graph_id, kind=kind)
            entry.update(fields)
            self.run_index.graphs.append(entry)
            (self.root / "graphs" / slug(graph_id)).mkdir(parents=True, exist_ok=True)
        else:
            entry.update({k: v for k, v in fields.items() if v is not None})
        return entry

    def graph_entry(self, graph_id: str) -> GraphEntry:
        entry = self.run_index.graph(graph_id)
        if entry is None:
            raise KeyError(f"no graph {graph_id!r} in this ledger (call graph() first)")
        return entry

    def update_graph(self, graph_id: str, **fields: Any) -> None:
        """Set graph-level keys (``execution`` of ``airctl run``'s per-graph check, ...) and flush."""
        self.graph_entry(graph_id).update(fields)
        self.flush()

    def stages(self, graph_id: str) -> list[StageEntry]:
        return self.graph_entry(graph_id).stages

    def last_stage(self, graph_id: str, dialect: str | None = None) -> StageEntry | None:
        """The graph's latest stage (of ``dialect``, when given), or None."""
        entry = self.run_index.graph(graph_id)
        stages = entry.stages if entry is not None else []
        return next((s for s in reversed(stages) if dialect is None or s.dialect == dialect), None)

    def stage_file(self, stage: StageEntry) -> Path:
        """Where the stage's snapshot (JSON) is."""
        return self.root / stage.file

    def graph_kind(self, graph_id: str) -> str:
        return self.graph_entry(graph_id).kind

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
    ) -> StageEntry:
        """Snapshot ``graph`` as the next stage of ``graph_id`` (``extra``: the stage's other keys)."""
        stages = self.graph_entry(graph_id).stages
        index = len(stages)
        previous = stages[-1] if stages else None
        if changed is False and previous is not None and previous.dialect == graph.dialect:
            # an unchanged pass shares its predecessor's snapshot files
            file, text_file = previous.file, previous.text
        else:
            base = f"graphs/{slug(graph_id)}/{index:03d}-{slug(name.replace(':', '_'))}"
            try:
                write_json(graph, self.root / f"{base}.json")
                file, text_file = f"{base}.json", None
                if text is not None:
                    (self.root / f"{base}.txt").write_text(text, encoding="utf-8")
                    text_file = f"{base}.txt"
            except OSError as e:  # a full disk: stop the run cleanly, the stages before stay
                raise cannot_write(self.root, e) from e
        stage = StageEntry(
            index=index, name=name, dialect=graph.dialect, changed=changed, nodes=len(graph),
            node_delta=None if previous is None or previous.nodes is None else len(graph) - previous.nodes,
            file=file, text=text_file, seconds=seconds,
            elapsed=round(time.perf_counter() - self._started, 3),
        )
        stage.update(extra)
        stages.append(stage)
        self.flush()
        return stage

    def add_dump(self, path: Path, **fields: Any) -> DumpEntry | None:
        """List a TorchAir file (under the ledger) once; None when it is listed already."""
        rel = os.path.relpath(path, self.root)
        if self.dump_entry(path) is not None:
            return None
        entry = DumpEntry(file=rel)
        entry.update(fields)
        self.run_index.dumps.append(entry)
        self.flush()
        return entry

    def dump_entry(self, path: Path) -> DumpEntry | None:
        rel = os.path.relpath(path, self.root)
        return next((d for d in self.run_index.dumps if d.file == rel), None)

    def update_dump(self, path: Path, **fields: Any) -> None:
        """Set keys of a listed dump (``source``: where the script had TorchAir write it) and flush."""
        entry = self.dump_entry(path)
        if entry is not None:
            entry.update(fields)
            self.flush()

    # -- run-level fields ---------------------------------------------------------------------
    def set(self, **fields: Any) -> None:
        """Set run-level keys (documented ones become typed fields, others are kept as they are)."""
        self.run_index.update(fields)
        self.flush()

    def set_timing(self, name: str, seconds: float) -> None:
        """``timings[name]``, rounded to milliseconds."""
        self.run_index.timings[name] = round(seconds, 3)
        self.flush()

    def set_findings(self, rows: list[dict[str, Any]], first: dict[str, str]) -> None:
        """verify-each's findings, and the first stage each rule appeared in."""
        self.run_index.findings = rows
        self.run_index.first_stage_with_finding = first
        self.flush()

    def note(self, message: str) -> None:
        """Add to ``notes`` (what airctl changed or noticed during the run)."""
        if self.run_index.notes is None:
            self.run_index.notes = []
        self.run_index.notes.append(message)
        self.flush()

    def set_error(self, message: str, detail: dict[str, Any] | None = None) -> None:
        """Name the run's error without changing its status (a later, more precise message)."""
        self.run_index.error = message
        self.run_index.error_detail = detail
        self.flush()

    def fail(self, message: str, detail: dict[str, Any] | None = None) -> None:
        self.run_index.status = "failed"
        self.run_index.error = message
        self.run_index.error_detail = detail
        self.flush(best_effort=True)  # failing already: a full disk must not raise over the real error

    def set_report(self, path: Path | None = None, error: str | None = None) -> None:
        """``report`` (ledger-relative) once report.html is written, or ``report_error`` when it failed."""
        if error is not None:
            self.run_index.report_error = error
        else:
            self.run_index.report = str(path.relative_to(self.root)) if path else None
        self.flush()

    def finish(self, status: str | None = None) -> None:
        """The run's end (ok, or the status given): total time, and it becomes the current run of its
        ``--out`` folder (:mod:`airctl.ledger.runs`), whatever its status."""
        if status:
            self.run_index.status = status
        elif self.run_index.status == "running":
            self.run_index.status = "ok"
        self.run_index.timings["total_seconds"] = round(time.perf_counter() - self._started, 3)
        self.flush(best_effort=self.run_index.status != "ok")
        with contextlib.suppress(OSError):  # a full disk: the run is still there, `airctl runs` finds it
            mark_latest(self.root.parent, self.root.name)

    def flush(self, best_effort: bool = False) -> None:
        """Rewrite index.json atomically (write a temporary file, then rename it over).

        When that fails (a full disk, a file-size limit), the index is rewritten in place, compact —
        it fits where the old one was, so no new space is needed — and the run goes on; when even
        that fails, a :class:`~airctl.errors.LedgerError` names the ledger (``best_effort``: nothing
        is raised; the failure paths use it so a run that fails keeps failing cleanly)."""
        data = self.run_index.to_json()
        tmp = self.root / (INDEX + ".tmp")
        text = json.dumps(data, indent=1, default=str)
        # JSON allows trailing blanks: a small index keeps room for an in-place rewrite on a full disk
        try:
            for slack in (max(0, RESERVE - len(text)), 1024, 0):
                try:
                    tmp.write_text(text + "\n" + " " * slack, encoding="utf-8")
                    break
                except OSError:
                    if not slack:
                        raise
            tmp.replace(self.root / INDEX)
            return
        except OSError as e:
            error = e
            with contextlib.suppress(OSError):
                tmp.unlink()
        for payload in (data, _essential(data), _essential(data, minimal=True)):  # ever smaller: see _essential
            if self._rewrite_in_place(json.dumps(payload, separators=(",", ":"), default=str).encode("utf-8")):
                return
        if not best_effort:
            raise cannot_write(self.root, error) from error

    def _rewrite_in_place(self, payload: bytes) -> bool:
        """index.json overwritten where it is, blank-padded to its old size (the room stays for next time)."""
        path = self.root / INDEX
        try:
            size = path.stat().st_size
            if size < len(payload):
                return False
            with path.open("r+b") as f:
                f.write(payload + b" " * (size - len(payload)))
            return True
        except OSError:
            return False

"""Write a ledger as a run goes, so an interrupted or failed run keeps what it captured.

The one writer of ``index.json``: it holds the run's :class:`~airctl.ledger.index.RunIndex` and
rewrites the file atomically after every change — while stages stream in, only as often as keeps
that under a tenth of the run's time (:data:`FLUSH_SHARE`: a run with thousands of stages would
otherwise spend time quadratic in their number), and at once for the run's status, error and end.
Layout (a contract: tests and other tools read it; documented in docs/ledger.md)::

    <out>/<run-id>/                           never overwrites an earlier run
      index.json                              the run index
      graphs/<graph-id>/<NNN>-<stage>.json.gz airctl graph model (airctl.io.json_io), gzip
      graphs/<graph-id>/<NNN>-<stage>.txt.gz  readable FX code, or GE op listing
      torchair/                               TorchAir's own dumps and generated code, as it named them
      log.txt                                 TorchAir's and airctl's log of the run
      report.html                             single-file viewer (written at the end, if available)

Snapshots are content-addressed: a stage whose graph is one the graph had already (same content
key, the capture's digest) refers to that stage's files instead of writing new ones. New files
are serialised, compressed and written off the compile thread (:mod:`airctl.ledger.files`);
the writer keeps the graphs it wrote in memory for the report (:meth:`LedgerWriter.stage_graph`).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airctl import __version__
from airctl.graph.model import Graph
from airctl.io.json_io import write_json
from airctl.ledger.files import BackgroundFiles
from airctl.ledger.index import DumpEntry, GraphEntry, RunIndex, StageEntry
from airctl.ledger.record import INDEX

FLUSH_SHARE = 0.1  # at most this share of the time between unforced rewrites of index.json goes to writing it
SNAPSHOT_EXT = ".json.gz"
TEXT_EXT = ".txt.gz"
Text = str | Callable[[], str] | None

__all__ = ["INDEX", "LedgerWriter", "new_run_id", "slug"]


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
        self._files = BackgroundFiles()
        self._graphs: dict[str, Graph] = {}  # ledger-relative snapshot file -> the graph written there
        self._content: dict[tuple[str, str], tuple[str, str | None]] = {}  # (graph id, key) -> (file, text)
        self._flushed_at = 0.0
        self._flush_cost = 0.0  # seconds the last rewrite of index.json took

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
        (root / "graphs").mkdir()
        (root / "torchair").mkdir()
        index = RunIndex(
            airctl_version=__version__, run_id=run_id,
            created=_dt.datetime.now().astimezone().isoformat(timespec="seconds"),
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
        self.flush(force=False)

    def stages(self, graph_id: str) -> list[StageEntry]:
        return self.graph_entry(graph_id).stages

    def last_stage(self, graph_id: str, dialect: str | None = None) -> StageEntry | None:
        """The graph's latest stage (of ``dialect``, when given), or None."""
        entry = self.run_index.graph(graph_id)
        stages = entry.stages if entry is not None else []
        return next((s for s in reversed(stages) if dialect is None or s.dialect == dialect), None)

    def stage_file(self, stage: StageEntry) -> Path:
        """Where the stage's snapshot is (written by the time :meth:`drain` returns)."""
        return self.root / stage.file

    def stage_graph(self, stage: StageEntry) -> Graph:
        """The stage's snapshot: the graph this writer wrote, else read back from its file."""
        graph = self._graphs.get(stage.file)
        if graph is not None:
            return graph
        from airctl.io.json_io import read_json

        self.drain()
        return read_json(self.stage_file(stage))

    @property
    def graphs_written(self) -> dict[str, Graph]:
        """Ledger-relative snapshot file -> the graph written there (for the report, without re-reading)."""
        return dict(self._graphs)

    def graph_kind(self, graph_id: str) -> str:
        return self.graph_entry(graph_id).kind

    def add_stage(
        self,
        graph_id: str,
        name: str,
        graph: Graph,
        *,
        text: Text = None,
        changed: bool | None = None,
        seconds: float | None = None,
        content_key: str | None = None,
        **extra: Any,
    ) -> StageEntry:
        """Snapshot ``graph`` as the next stage of ``graph_id`` (``extra``: the stage's other keys).

        ``text`` (or a function returning it, called only when a new snapshot is written) is the
        stage's readable text. ``content_key`` names the graph's content (the capture's digest): a
        graph this graph id had already refers to those files; so does a pass that reports
        ``changed=False``. ``graph`` must not change afterwards (it is written in the background)."""
        stages = self.graph_entry(graph_id).stages
        index = len(stages)
        previous = stages[-1] if stages else None
        shared = self._content.get((graph_id, content_key)) if content_key else None
        if shared is None and changed is False and previous is not None and previous.dialect == graph.dialect:
            shared = (previous.file, previous.text)
        base = f"graphs/{slug(graph_id)}/{index:03d}-{slug(name.replace(':', '_'))}"
        if shared is not None:
            file, text_file = shared
            if text_file is None and text is not None:  # the first stage with this graph kept no text
                text_file = self._write_text(base, text)
        else:
            file = base + SNAPSHOT_EXT
            self._graphs[file] = graph
            self._files.submit(self.root / file, lambda: write_json(graph))
            text_file = self._write_text(base, text) if text is not None else None
        if content_key:
            self._content[(graph_id, content_key)] = (file, text_file)
        stage = StageEntry(
            index=index, name=name, dialect=graph.dialect, changed=changed, nodes=len(graph),
            node_delta=None if previous is None or previous.nodes is None else len(graph) - previous.nodes,
            file=file, text=text_file, seconds=seconds,
        )
        stage.update(extra)
        stages.append(stage)
        self.flush(force=False)
        return stage

    def _write_text(self, base: str, text: Text) -> str:
        value = text() if callable(text) else text
        assert value is not None
        self._files.submit(self.root / (base + TEXT_EXT), lambda: value)
        return base + TEXT_EXT

    def write_file(self, rel: str, produce: Callable[[], str | bytes]) -> Path:
        """Write ``produce()`` to ``<ledger>/rel`` in the background (compressed when it ends in ``.gz``)."""
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        self._files.submit(path, produce)
        return path

    def compress_file(self, path: Path) -> Path:
        """Replace a file under the ledger by ``<name>.gz`` (in the background); returns the new path."""
        target = path.with_name(path.name + ".gz")
        self._files.submit(target, path.read_bytes)
        self._files.call(lambda: path.unlink(missing_ok=True))  # after the compressed copy is on disk
        return target

    def compress_log(self) -> None:
        """Replace the run's log (``log``, once the run is over) by its gzip-compressed copy."""
        name = self.run_index.log
        path = self.root / name if name else None
        if path is None or path.suffix == ".gz" or not path.is_file():
            return
        from airctl.ledger.files import write_file

        write_file(path.with_name(path.name + ".gz"), path.read_bytes())
        path.unlink()
        self.set(log=name + ".gz")

    def drain(self) -> None:
        """Wait until every file handed to the background writer is on disk."""
        self._files.drain()

    def sync(self) -> None:
        """Everything handed to the writer on disk: the stage files, and index.json as it is now."""
        self.drain()
        self.flush()

    def add_dump(self, path: Path, **fields: Any) -> DumpEntry | None:
        """List a TorchAir file (under the ledger) once; None when it is listed already."""
        rel = os.path.relpath(path, self.root)
        if self.dump_entry(path) is not None:
            return None
        entry = DumpEntry(file=rel)
        entry.update(fields)
        self.run_index.dumps.append(entry)
        self.flush(force=False)
        return entry

    def dump_entry(self, path: Path) -> DumpEntry | None:
        rel = os.path.relpath(path, self.root)
        return next((d for d in self.run_index.dumps if d.file == rel), None)

    def update_dump(self, path: Path, **fields: Any) -> None:
        """Set keys of a listed dump (``source``: where the script had TorchAir write it) and flush."""
        entry = self.dump_entry(path)
        if entry is not None:
            entry.update(fields)
            self.flush(force=False)

    # -- run-level fields ---------------------------------------------------------------------
    def set(self, **fields: Any) -> None:
        """Set run-level keys (documented ones become typed fields, others are kept as they are)."""
        self.run_index.update(fields)
        self.flush()

    def set_timing(self, name: str, seconds: float) -> None:
        """``timings[name]``, rounded to milliseconds."""
        self.run_index.timings[name] = round(seconds, 3)
        self.flush(force=False)

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
        self.set_error(message, detail)

    def set_report(self, path: Path | None = None, error: str | None = None) -> None:
        """``report`` (ledger-relative) once report.html is written, or ``report_error`` when it failed."""
        if error is not None:
            self.run_index.report_error = error
        else:
            self.run_index.report = str(path.relative_to(self.root)) if path else None
        self.flush()

    def finish(self, status: str | None = None) -> None:
        """The run's end: every file written (a write that failed becomes a note), the status set."""
        try:
            self.drain()
        except (OSError, ValueError) as e:
            self.note(f"some ledger files could not be written: {type(e).__name__}: {e}")
        if status:
            self.run_index.status = status
        elif self.run_index.status == "running":
            self.run_index.status = "ok"
        self.run_index.timings["total_seconds"] = round(time.perf_counter() - self._started, 3)
        self.flush()

    def flush(self, force: bool = True) -> None:
        """Rewrite index.json atomically (write a temporary file, then rename it over). Unforced
        (stages, dumps, timings streaming in) it is skipped while less than ``cost / FLUSH_SHARE``
        has passed since the last rewrite; the next rewrite writes what it held back."""
        now = time.perf_counter()
        if not force and now - self._flushed_at < self._flush_cost / FLUSH_SHARE:
            return
        tmp = self.root / (INDEX + ".tmp")
        tmp.write_text(json.dumps(self.run_index.to_json(), indent=1, default=str), encoding="utf-8")
        tmp.replace(self.root / INDEX)
        self._flushed_at = time.perf_counter()
        self._flush_cost = self._flushed_at - now

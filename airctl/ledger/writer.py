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
      log.txt                                 TorchAir's and airctl's log of the run (log.txt.gz after it)
      report.html                             single-file viewer (written at the end, if available)

Snapshots are content-addressed: a stage whose graph is one the graph had already (same content
key, the capture's digest) refers to that stage's files instead of writing new ones. New files
are serialised, compressed and written off the compile thread (:mod:`airctl.ledger.files`);
the writer keeps what it wrote in memory for the report (:meth:`LedgerWriter.stage_graph`,
:mod:`airctl.ledger.snapshots`): the
graph until it is encoded, then only its JSON text (a string: ten times smaller than the graph's
objects, and nothing for the garbage collector to walk while TorchAir goes on compiling).

A full disk (or a file-size limit) never leaves a run without a valid index: ``index.json`` is
rewritten in place when no new space can be had (:mod:`airctl.ledger.index_file`), a snapshot
the background writer could not write takes its stages out of the index, and the run stops with
a :class:`~airctl.errors.LedgerError` (at the next stage, or at its end). When the run ends it
becomes the current run of its ``--out`` folder (:mod:`airctl.ledger.runs`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from airctl import __version__
from airctl.graph.model import Graph
from airctl.ledger.files import BackgroundFiles, copy_compressed
from airctl.ledger.index import DumpEntry, GraphEntry, RunIndex, StageEntry, WhyEvent
from airctl.ledger.index_file import cannot_write, write_index
from airctl.ledger.liveness import process_record, startup_for_ledger
from airctl.ledger.lost_files import missing_files, unlist
from airctl.ledger.record import INDEX
from airctl.ledger.run_folder import make_run_folder, slug
from airctl.ledger.runs import mark_latest
from airctl.ledger.snapshots import Snapshots

FLUSH_SHARE = 0.1  # at most this share of the time between unforced rewrites of index.json goes to writing it
SNAPSHOT_EXT = ".json.gz"
TEXT_EXT = ".txt.gz"
Text = str | Callable[[], str] | None

__all__ = ["INDEX", "LedgerWriter", "cannot_write"]


class LedgerWriter:
    """Accumulates the run index and the stage files of one run; every change is flushed."""

    def __init__(self, root: Path, run_index: RunIndex, shown: Path | None = None) -> None:
        self.root = root
        self.shown = shown or root  # the folder as the user typed it (relative stays relative): what is printed
        self.run_index = run_index
        self._started = time.perf_counter()
        self._files = BackgroundFiles()
        self._snapshots = Snapshots()  # what was written, kept for the report (ledger/snapshots.py)
        self._flushed_at = 0.0
        self._flush_cost = 0.0  # seconds the last rewrite of index.json took

    @classmethod
    def create(cls, out_dir: Path | str, label: str, **fields: Any) -> LedgerWriter:
        """A new run folder under ``out_dir`` (never an existing one); ``fields`` are run-level keys.
        The folder is absolute from here on: the user's code may change the working folder (``shown``
        keeps it as typed, for what is printed; the run restores the working folder when it ends)."""
        root = make_run_folder(out_dir, label)
        run_id = root.name
        try:
            writer = cls._start(root, run_id, fields)
            writer.shown = Path(os.path.normpath(Path(out_dir) / run_id))
            return writer
        except BaseException:  # not even index.json fits (a full disk): no folder that is not a run is left
            shutil.rmtree(root, ignore_errors=True)
            raise

    @classmethod
    def create_at(cls, root: Path | str, run_id: str | None = None, **fields: Any) -> LedgerWriter:
        """A new ledger in exactly ``root`` (a multi-rank run's ``ranks/<rank>``), which must not
        exist yet or be empty; ``run_id`` defaults to the folder name (made absolute, as :meth:`create`)."""
        typed, root = Path(root), Path(os.path.abspath(root))
        root.mkdir(parents=True, exist_ok=True)
        if any(root.iterdir()):
            raise FileExistsError(f"{root} is not empty: a ledger is never written over another")
        writer = cls._start(root, run_id or root.name, fields)
        writer.shown = Path(os.path.normpath(typed))
        return writer

    @classmethod
    def _start(cls, root: Path, run_id: str, fields: dict[str, Any]) -> LedgerWriter:
        (root / "graphs").mkdir()
        (root / "torchair").mkdir()
        index = RunIndex(
            airctl_version=__version__, run_id=run_id,
            created=_dt.datetime.now().astimezone().isoformat(timespec="milliseconds"),
            status="running", graphs=[], log="log.txt", process=process_record(),
        )
        index.update(fields, "LedgerWriter.create()")
        startup, before = startup_for_ledger()
        if startup is not None:
            index.timings["startup_seconds"] = round(startup, 3)
        if before is not None:
            index.timings["before_run_seconds"] = round(before, 3)
        writer = cls(root, index)
        writer.flush()
        return writer

    def graph(self, graph_id: str, kind: str, **fields: Any) -> GraphEntry:
        """The graph's entry, created on first use; later calls update the fields given non-None."""
        entry = self.run_index.graph(graph_id)
        if entry is None:
            entry = GraphEntry(id=graph_id, kind=kind)
            entry.update(fields, "LedgerWriter.graph()")
            self.run_index.graphs.append(entry)
            (self.root / "graphs" / slug(graph_id)).mkdir(parents=True, exist_ok=True)
        else:
            entry.update({k: v for k, v in fields.items() if v is not None}, "LedgerWriter.graph()")
        return entry

    def graph_entry(self, graph_id: str) -> GraphEntry:
        entry = self.run_index.graph(graph_id)
        if entry is None:
            raise KeyError(f"no graph {graph_id!r} in this ledger (call graph() first)")
        return entry

    def update_graph(self, graph_id: str, **fields: Any) -> None:
        """Set graph-level keys (``execution`` of ``airctl run``'s per-graph check, ...) and flush."""
        self.graph_entry(graph_id).update(fields, "LedgerWriter.update_graph()")
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
        graph = self._snapshots.written(stage.file)
        if graph is not None:
            return graph
        from airctl.io.json_io import read_json

        self.drain()
        return read_json(self.stage_file(stage))

    @property
    def graphs_written(self) -> Mapping[str, Graph]:
        """Ledger-relative snapshot file -> the graph written there (for the report, without reading
        files back); each is decoded from the text kept in memory when asked for."""
        return self._snapshots.view()

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
        ``changed=False``. ``graph`` must not change afterwards (it is written in the background).
        A file the background writer could not write (a full disk) raises a LedgerError here, at the
        next stage: the run stops cleanly, and its stages whose files are on disk stay listed."""
        self._check_files()
        stages = self.graph_entry(graph_id).stages
        index = len(stages)
        previous = stages[-1] if stages else None
        shared = self._snapshots.shared(graph_id, content_key)
        if shared is None and changed is False and previous is not None and previous.dialect == graph.dialect:
            shared = (previous.file, previous.text)
        base = f"graphs/{slug(graph_id)}/{index:03d}-{slug(name.replace(':', '_'))}"
        if shared is not None:
            file, text_file = shared
            if text_file is None and text is not None:  # the first stage with this graph kept no text
                text_file = self._write_text(base, text)
        else:
            file = base + SNAPSHOT_EXT
            self._snapshots.keep(file, graph)
            self._files.submit(self.root / file, lambda: self._snapshots.encode(file, graph))
            text_file = self._write_text(base, text) if text is not None else None
        self._snapshots.remember(graph_id, content_key, (file, text_file))
        stage = StageEntry(
            index=index, name=name, dialect=graph.dialect, changed=changed, nodes=len(graph),
            node_delta=None if previous is None or previous.nodes is None else len(graph) - previous.nodes,
            file=file, text=text_file, seconds=seconds,
            elapsed=round(time.perf_counter() - self._started, 3),
        )
        stage.update(extra, "LedgerWriter.add_stage()")
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

        def compress() -> None:
            copy_compressed(path, target)  # streamed: a big dump is not read whole
            path.unlink(missing_ok=True)  # once the compressed copy is on disk; kept when that failed

        self._files.call(compress, target)
        return target

    def compress_log(self) -> None:
        """Replace the run's log (``log``, once the run is over) by its gzip-compressed copy."""
        name = self.run_index.log
        path = self.root / name if name else None
        if path is None or path.suffix == ".gz" or not path.is_file():
            return
        try:
            copy_compressed(path, path.with_name(path.name + ".gz"))  # streamed: a long log is not read whole
        except OSError:  # a full disk: the plain log stays
            return
        path.unlink()
        self.set(log=name + ".gz")

    def drain(self) -> None:
        """Wait until every file handed to the background writer is on disk; a write that failed
        raises (a full disk: a LedgerError naming the ledger), its stages left out of the index."""
        error = self._settle()
        if isinstance(error, OSError):
            raise cannot_write(self.root, error) from error
        if error is not None:
            raise error

    def _check_files(self) -> None:
        """Raise now (as :meth:`drain` does) if a background write has failed so far; no waiting."""
        if self._files.failed():
            self.drain()

    def _settle(self) -> BaseException | None:
        """Wait for the background writer, and take its failures: the files they were are unlisted
        (:meth:`_forget`); returns the first error."""
        self._files.wait()
        failures = self._files.take_failures()
        if not failures:
            return None
        lost = {os.path.relpath(path, self.root) for path, _ in failures if path is not None}
        error = failures[0][1]
        self._forget(lost, f"{type(error).__name__}: {error}")
        return error

    def forget_missing(self) -> None:
        """Unlist the stage files that are not on disk (a process that ended before its background
        writes did: a killed rank's ledger, finished by the launcher)."""
        lost = missing_files(self.run_index, self.root)
        if lost:
            self._forget(lost, "the process ended before they were written")

    def _forget(self, lost: set[str], why: str) -> None:
        """The files ``lost`` out of the index (:mod:`airctl.ledger.lost_files`) and the report's memory."""
        unlist(self.run_index, self.root, lost, why)
        self._snapshots.forget(lost)

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
        entry.update(fields, "LedgerWriter.add_dump()")
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
            entry.update(fields, "LedgerWriter.update_dump()")
            self.flush(force=False)

    # -- run-level fields ---------------------------------------------------------------------
    def set(self, **fields: Any) -> None:
        """Set run-level keys: fields of :class:`~airctl.ledger.index.RunIndex`; any other key (a
        misspelt one) raises ``TypeError`` before anything is set."""
        self.run_index.update(fields, "LedgerWriter.set()")
        self.flush()

    def elapsed(self) -> float:
        """Seconds since the run started (the order key of ``events`` and ``captures``)."""
        return round(time.perf_counter() - self._started, 6)

    def add_event(self, event: dict[str, Any]) -> WhyEvent:
        """One row of ``events`` (``airctl why``), typed; ``seq`` defaults to :meth:`elapsed`."""
        record = WhyEvent.from_json({"seq": self.elapsed(), **event}, file=INDEX)
        self.run_index.events = [*(self.run_index.events or []), record]
        self.flush(force=False)
        return record

    def set_timing(self, name: str, seconds: float) -> None:
        """``timings[name]``, rounded to milliseconds, and when it ended (``timing_ends[name]``,
        seconds from the run's start: where the phase sits on ``airctl show --phases``' time line)."""
        self.run_index.timings[name] = round(seconds, 3)
        self.run_index.timing_ends = {**(self.run_index.timing_ends or {}), name: round(self.elapsed(), 3)}
        self.flush(force=False)

    def set_findings(self, rows: list[dict[str, Any]]) -> None:
        """verify-each's findings, and the first stage each rule appeared in (the ``graph:stage`` of its
        first row). ``rows`` with ``fixed_by`` (an earlier stage's finding a later pass removed) go to
        ``fixed_findings``, rows with ``other_mode`` (the plan checked under another mode) to
        ``other_modes``: ``findings`` is the final graph's verdict alone."""
        first: dict[str, str] = {}
        for row in rows:
            first.setdefault(row.get("rule", "?"), f"{row.get('graph')}:{row.get('stage')}")
        self.run_index.findings = [r for r in rows if not r.get("fixed_by") and not r.get("other_mode")]
        fixed = [r for r in rows if r.get("fixed_by")]
        other = [r for r in rows if r.get("other_mode")]
        self.run_index.fixed_findings = fixed or None
        self.run_index.other_modes = other or None
        self.run_index.first_stage_with_finding = {
            k: v for k, v in first.items() if any(r.get("rule") == k for r in self.run_index.findings)}
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
        """The run's end (ok, or the status given): every file written, total time, and it becomes
        the current run of its ``--out`` folder (:mod:`airctl.ledger.runs`), whatever its status.
        A file that could not be written (a full disk) is left out of the index and noted in it; a
        run that was going to end ok then fails with a LedgerError naming the ledger."""
        error = self._settle()
        if isinstance(error, OSError) and self.run_index.status == "running" and not status:
            failure = cannot_write(self.root, error)
            self.fail(failure.message, failure.to_json())
            self.finish("failed")
            raise failure from error
        if status:
            self.run_index.status = status
        elif self.run_index.status == "running":
            self.run_index.status = "ok"
        self.run_index.timings["total_seconds"] = round(time.perf_counter() - self._started, 3)
        self.flush(best_effort=self.run_index.status != "ok")
        with contextlib.suppress(OSError):  # a full disk: the run is still there, `airctl runs` finds it
            mark_latest(self.root.parent, self.root.name)

    def flush(self, force: bool = True, best_effort: bool = False) -> None:
        """Rewrite index.json atomically (:func:`~airctl.ledger.index_file.write_index`: on a full disk
        in place, compact; ``best_effort``: a failure raises nothing — the failure paths use it so a run
        that fails keeps failing cleanly). Unforced (stages, dumps, timings streaming in) it is skipped
        while less than ``cost / FLUSH_SHARE`` has passed since the last rewrite; the next rewrite
        writes what it held back."""
        now = time.perf_counter()
        if not force and now - self._flushed_at < self._flush_cost / FLUSH_SHARE:
            return
        write_index(self.root, self.run_index.to_json(), best_effort=best_effort)
        self._flushed_at = time.perf_counter()
        self._flush_cost = self._flushed_at - now

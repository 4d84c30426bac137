"""Open a ledger folder and load its stages: the one reader of ``index.json``.

``airctl dump``/``diff`` (:mod:`airctl.io.source`), ``check`` (:mod:`airctl.verify.inputs`), the
report and ``profile analyze --run`` all read a ledger through :class:`Ledger`, so they agree on what a
malformed index is, on which paths a ledger may name, and on the default stage
(:func:`airctl.ledger.defaults.default_stage`).

>>> led = Ledger.open("airctl-runs/<run-id>")              # doctest: +SKIP
>>> stage = led.find_stage("fx-final")                      # doctest: +SKIP
>>> graph = led.load(stage)                                 # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from airctl.errors import LedgerError
from airctl.graph.model import Graph
from airctl.io.read import read_graph
from airctl.ledger.defaults import Request, StageRequest, default_stage
from airctl.ledger.index import RunIndex, StageRef
from airctl.ledger.index_load import read_index
from airctl.ledger.record import INDEX
from airctl.ledger_files import is_ledger
from airctl.safe_files import check_regular

OPEN_HINT = "pass the run folder that `airctl compile` printed (airctl-runs/<run-id>)"


class Ledger:
    """A ledger folder and its typed index."""

    def __init__(self, root: Path, index: RunIndex) -> None:
        self.root = root
        self.index = index

    @property
    def index_path(self) -> Path:
        return self.root / INDEX

    is_ledger = staticmethod(is_ledger)  # the one answer (airctl.ledger_files)

    @classmethod
    def open(cls, path: Path | str) -> Ledger:
        """Read and check ``<path>/index.json``; every problem is a :class:`LedgerError` with the file."""
        root = Path(path)
        index_path = root / INDEX
        if not index_path.is_file():
            raise LedgerError(f"not a ledger: no {INDEX}", file=str(root), hint=OPEN_HINT)
        return cls(root, read_index(root))

    # -- stages --------------------------------------------------------------------------------
    def graph_ids(self) -> list[str]:
        return self.index.graph_ids()

    def stages(self, graph_id: str | None = None) -> list[StageRef]:
        return self.index.stages(graph_id)

    def default_stage(self, request: StageRequest | Request, graph_id: str | None = None) -> StageRef | None:
        return default_stage(self.index, request, graph_id)

    def find_stage(self, name: str | None = None, graph_id: str | None = None,
                   request: StageRequest | Request = Request.DUMP) -> StageRef:
        """A stage by name, index (negative counts from the end) or ``<graph id>/<name>``; in graph
        ``graph_id``, else in the first graph and then the others. Without a name: the default
        stage of ``request`` (docs/ledger.md)."""
        if graph_id is not None and self.index.graph(graph_id) is None:
            raise LedgerError(f"no graph {graph_id!r} in the ledger", file=str(self.index_path),
                              hint="graphs are: " + ", ".join(self.graph_ids()))
        first = graph_id or (self.index.graphs[0].id if self.index.graphs else None)
        stages = self.stages(first) if first is not None else []
        if not stages:
            raise self.no_stages()
        if name is None:
            found = self.default_stage(request, first)
            if found is None:
                raise LedgerError(f"graph {first} has no stage for {request}", file=str(self.index_path),
                                  hint=f"give --stage; {_listing(stages)}")
            return found
        if name.startswith("-") and name[1:].isdigit() and -len(stages) <= int(name) < 0:
            return stages[int(name)]
        for stage in stages if graph_id else self.stages():
            if stage.matches(name):
                return stage
        where = f"graph {graph_id}" if graph_id else "the ledger"
        raise LedgerError(f"no stage {name!r} in {where}", file=str(self.index_path),
                          hint=f"give a name or index (negative counts from the end) of graph {first}: "
                               f"{', '.join(f'{s.index} {s.name}' for s in stages)}")

    def no_stages(self) -> LedgerError:
        """The error for a ledger with no graph stage to read: a multi-rank ledger's are in its ranks'
        ledgers; else the run ended before Dynamo produced a graph."""
        if self.index.is_multi_rank:
            ranks = [r.ledger for r in self.index.ranks or [] if r.ledger]
            return LedgerError("a multi-rank ledger: its graphs are in the ledger of each rank",
                               file=str(self.index_path),
                               hint=f"give a rank's ledger, e.g. {self.root / (ranks[0] if ranks else 'ranks/0')}")
        return LedgerError(f"the ledger has no graph stages (the run {self.index.status or 'failed'} before "
                           "Dynamo produced a graph)", file=str(self.index_path), hint=self._earlier_with_graphs())

    def _earlier_with_graphs(self) -> str:
        """Which run of the same ``--out`` folder has graphs, and how to pick it."""
        from airctl.ledger.runs import list_runs

        try:
            for row in list_runs(self.root.parent):
                if row.id != self.root.name and row.status in ("ok", "planned", "mismatch") and Ledger.open(
                        Path(row.path)).index.graphs:
                    return (f"run {row.id} ({row.command or '?'}, {row.status}) has graphs: "
                            f"`--run {row.id}` picks it")
        except Exception:  # a hint never hides the error it belongs to
            pass
        return "compile the model again (`airctl compile MODEL.py`); `airctl runs` lists the runs"

    def stage_path(self, stage: StageRef) -> Path:
        return stage_path(self.root, stage.file, stage.name)

    def load(self, stage: StageRef, keep_refs: bool = False) -> Graph:
        """The stage's snapshot, read and validated like any graph file (errors name the file);
        ``keep_refs``: :func:`~airctl.io.read.check_graph`'s."""
        return read_graph(self.stage_path(stage), keep_refs)


def _listing(stages: list[StageRef]) -> str:
    return "stages are: " + ", ".join(f"{s.index} {s.name}" for s in stages)


def stage_path(root: Path, file: str, stage: str | None = None) -> Path:
    """``root / file`` for a stage file named in index.json, refusing paths that leave the ledger:
    absolute paths, ``..``, and links (the file or a folder on its way) that point outside; and
    anything but a regular file there (a FIFO would block the reader forever)."""
    rel = Path(str(file))
    which = f"stage {stage!r}" if stage else "a stage file"
    if rel.is_absolute() or ".." in rel.parts:
        raise LedgerError(f"{which} points outside the ledger: {file!r}", file=str(root / INDEX),
                          hint="stage files are relative paths under the ledger folder")
    path = root / rel
    resolved, inside = path.resolve(), root.resolve()
    if resolved != inside and inside not in resolved.parents:
        raise LedgerError(f"{which} points outside the ledger: {file!r} is a link to {str(resolved)!r}",
                          file=str(root / INDEX), hint="stage files are files under the ledger folder, not links out")
    if path.exists():  # a missing file is the reader's error; a FIFO or a folder must not block or crash it
        check_regular(path, hint=f"{which} of this ledger was replaced; airctl writes regular files only")
    return path

"""The run index: ``index.json`` as dataclasses (fields documented in docs/ledger.md).

One :class:`RunIndex` per run; it holds one :class:`GraphEntry` per compiled graph, each with its
:class:`StageEntry` list, and one :class:`DumpEntry` per TorchAir file; a multi-rank run's top
index has one :class:`RankEntry` per rank; the objects inside them (``execution``, ``model``,
``error_detail``, ``findings`` rows, ...) are the ``TypedDict`` records of :mod:`airctl.ledger.index_parts`.
A field is the only way a key gets written: :meth:`~airctl.ledger.record.Record.update` refuses any
other (a ``TypeError`` naming the writer's method). Written by
:class:`~airctl.ledger.writer.LedgerWriter` only, read by :class:`~airctl.ledger.reader.Ledger`
only. ``to_json()`` gives today's JSON shape; ``RunIndex.from_json`` checks types and raises
:class:`~airctl.errors.LedgerError` naming ``index.json`` and the graph and stage.

>>> index = RunIndex.from_json({"graphs": [{"id": "1-inference", "stages": [
...     {"index": 0, "name": "fx-final", "file": "graphs/1-inference/000-fx-final.json"}]}]})
>>> [s.name for s in index.stages()]
['fx-final']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airctl.errors import LedgerError
from airctl.ledger.index_parts import (
    BackendInfo,
    BisectStep,
    CaptureRow,
    CompilerRow,
    Divergence,
    EagerCheck,
    ErrorDetail,
    Execution,
    FindingRow,
    Imported,
    Launcher,
    ModelInfo,
    Placement,
    ProcessInfo,
    ProfileRow,
    RankLast,
    ScriptEnd,
    TorchAirWarnings,
)
from airctl.ledger.record import INDEX, Record, optional, required
from airctl.modes import Mode, UnknownMode

FORMAT = "airctl-ledger"
VERSION = 1


def parse_mode(text: str | None) -> Mode | None:
    """A mode ``index.json`` names (:meth:`Mode.parse`'s spellings); a :class:`LedgerError` naming the file
    for one that names no mode."""
    if text is None:
        return None
    try:
        return Mode.parse(text)
    except UnknownMode as e:
        raise LedgerError(f"malformed {INDEX}: {e}", file=INDEX, hint=e.hint) from None


@dataclass(kw_only=True)
class StageEntry(Record):
    """One snapshot of a graph: after a pass, or at a named point of the pipeline."""

    KIND = "stage"
    NAMED = ("name", str, "stage {index} ({name})")

    index: int = required()
    name: str = required()
    dialect: str | None = None  # "fx" or "ge"
    changed: bool | None = None  # null for stages that are not passes
    nodes: int | None = None
    node_delta: int | None = None
    file: str = required()  # ledger-relative snapshot (JSON)
    text: str | None = None  # ledger-relative readable text
    seconds: float | None = None  # a pass's own time
    elapsed: float | None = optional()  # seconds from the run's start to this capture
    fingerprint: str | None = optional()  # fx-final and the aclgraph passes: change detection
    returned_new_graph: str | None = optional()  # a custom pass returned a graph (rule R11)
    error: str | None = optional()  # failed:<pass>: the first line of the pass's error
    # yaml:<pass> stages (airctl passes / --passes)
    pass_kind: str | None = optional()
    yaml_line: int | None = optional()
    inserted: list[str] | None = optional()
    removed: list[str] | None = optional()
    skipped: str | None = optional()
    eager_check: EagerCheck | None = optional()
    placements: list[Placement] | None = optional()  # the units the pass found: {unit, nodes}
    applied_placements: list[int] | None = optional()  # `placements:` of the pass file: the units it kept
    imported_from: str | None = optional()  # airctl import: the file (and line) the stage was read from

    @property
    def effective_dialect(self) -> str:
        """``fx`` or ``ge``: the ``dialect`` written, else told by the name (``ge-*``, ``ge:*``)."""
        if self.dialect in ("fx", "ge"):
            return self.dialect
        return "ge" if self.name.startswith(("ge-", "ge:")) else "fx"


@dataclass(kw_only=True)
class GraphEntry(Record):
    """One compiled graph (a Dynamo graph in one AOT phase) and its stages, in pipeline order."""

    KIND = "graph"
    NAMED = ("id", str, "graph {id}")

    id: str = required()  # <k>-<kind>
    kind: str | None = None  # forward, backward, inference
    name: str | None = None  # TorchAir's graph name (graph_1)
    stages: list[StageEntry] = field(default_factory=list)
    dynamo_graph: int | None = optional()
    execution: Execution | None = optional()  # airctl run: this graph's execution check
    mode: str | None = optional()  # airctl import: the graph's mode, when the run's graphs differ (graph_mode)
    rank: int | None = optional()  # airctl import: the rank its files name (rank_<R>)
    pid: int | None = optional()  # airctl import: the process that compiled it
    notes: list[str] | None = optional()  # airctl import: how its files were linked, what is missing

    @property
    def graph_mode(self) -> Mode | None:
        """The graph's own mode (``mode``), None when it has none: the run's applies."""
        return parse_mode(self.mode)


@dataclass(kw_only=True)
class DumpEntry(Record):
    """A file TorchAir wrote (or airctl copied) into ``torchair/``."""

    KIND = "dump"

    file: str = required()  # ledger-relative
    graph: str | None = None  # TorchAir's graph name
    type: str | None = None  # pbtxt, txt, py
    stage: str | None = None  # ge-original, ge-optimized, aclgraph-*, generated-code
    written_by: str | None = None  # torchair
    source: str | None = optional()  # airctl run / import: where TorchAir wrote it
    rank: int | None = optional()  # the rank in its name (rank_<R>)


@dataclass(kw_only=True)
class RankEntry(Record):
    """One rank of a multi-rank run (``ranks[]`` of the top index; docs/multi-rank.md)."""

    KIND = "rank"
    NAMED = ("rank", int, "rank {rank}")
    UNNAMED = "rank entry {position}"

    rank: int = required()
    status: str | None = None  # the rank ledger's status, or died / killed / missing
    exit_code: int | None = None  # the worker's exit code (negative: killed by a signal)
    signal: str | None = optional()  # SIGABRT, SIGKILL, ... when a signal ended it
    ledger: str | None = None  # ledger-relative folder of the rank's own ledger (ranks/<rank>)
    log: dict[str, str] | None = optional()  # {"stdout", "stderr"}: the worker's console, ledger-relative
    error: str | None = optional()  # the first line of the rank's error
    last: RankLast | None = optional()  # where the rank was last seen (graph, node, op, stream, ...)
    stuck: str | None = optional()  # stopped while in the user's own code: where (function at file:line)


@dataclass(kw_only=True)
class WhyEvent(Record):
    """A graph break, recompile, cache decision or other event ``airctl why`` lists (docs/why.md).

    npugraph_ex's captures stay in ``captures``; everything else the run (or an imported log) told
    about why it compiled, broke or fell back is one of these, in the order it happened."""

    KIND = "event"
    NAMED = ("kind", str, "event {position} ({kind})")

    kind: str = required()  # graph_break, recompile, recompile_limit, cache_hit, cache_miss, cache_invalidated
    seq: float = required()  # order: seconds from the run's start (recorded), or the log line (imported)
    reason: str | None = None  # in plain words
    file: str | None = optional()  # the user's (or library's) file ...
    line: int | None = optional()  # ... and line
    compile_id: str | None = optional()  # Dynamo's frame/compile id ("0/1")
    graph: str | None = optional()  # the ledger graph the event produced (its Dynamo graph's first AOT graph)
    dynamo_graph: int | None = optional()  # ... as a Dynamo graph number
    source: str | None = optional()  # imported: the log file it was read from


@dataclass(kw_only=True)
class StageRef:
    """A stage together with the graph it belongs to."""

    graph_id: str
    entry: StageEntry

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def index(self) -> int:
        return self.entry.index

    @property
    def file(self) -> str:
        return self.entry.file

    @property
    def text(self) -> str | None:
        return self.entry.text

    @property
    def dialect(self) -> str:
        return self.entry.effective_dialect

    def matches(self, name: str) -> bool:
        """``name`` names this stage: its name, its index (``NNN``) or ``<graph id>/<name>``."""
        return (self.name == name or (name.isdigit() and self.index == int(name))
                or f"{self.graph_id}/{self.name}" == name)


@dataclass(kw_only=True)
class RunIndex(Record):
    """The whole ``index.json``."""

    KIND = "run"

    format: str = FORMAT
    version: int = VERSION
    airctl_version: str | None = None
    run_id: str | None = None
    created: str | None = None
    status: str | None = None  # running, ok, failed, mismatch, interrupted, terminated, planned; died (readers)
    process: ProcessInfo | None = optional()  # who writes it: {pid, host, start_ticks} (ledger/liveness.py)
    command: str | None = None
    backend: BackendInfo | None = None
    mode: str | None = None  # as index.json holds it (a Mode is written as its value); read it as run_mode
    model: ModelInfo | None = None
    passes: str | None = optional()  # the YAML pass file, as given
    passes_resolved: str | None = optional()  # ... and as an absolute path
    command_line: list[str] | None = optional()  # the airctl command that made the run
    options: dict[str, Any] | None = optional()  # --option KEY=VALUE: what was set on the mode's config, typed
    incremental: dict[str, Any] | None = optional()  # started from another run's pre-pass graph: {from, skipped}
    seed: int | None = optional()  # --seed: the random generators' seed before the script, eager and compiled runs
    # npugraph_ex: each capture of a graph (first, recaptures with their reason) and each fallback to eager
    captures: list[CaptureRow] | None = optional()
    # airctl why: graph breaks, recompiles, compile-cache decisions, in order (docs/why.md)
    events: list[WhyEvent] | None = optional()
    graphs: list[GraphEntry] = required()
    dumps: list[DumpEntry] = field(default_factory=list)
    findings: list[FindingRow] = field(default_factory=list)
    first_stage_with_finding: dict[str, str] | None = optional()
    fixed_findings: list[FindingRow] | None = optional()  # earlier stages' findings a later pass fixed (fixed_by)
    other_modes: list[FindingRow] | None = optional()  # the plan's errors under the other modes (other_mode)
    execution: Execution | None = None
    timings: dict[str, float] = field(default_factory=dict)
    timing_ends: dict[str, float] | None = optional()  # timings' ends, seconds from the run's start
    error: str | None = None
    error_detail: ErrorDetail | None = None
    log: str | None = None
    report: str | None = None
    report_error: str | None = optional()
    torchair_warnings: TorchAirWarnings | None = optional()  # not printed; `airctl compile -v` prints them
    # airctl run (docs/run.md)
    compilers: list[CompilerRow] | None = optional()
    profiles: list[ProfileRow] | None = optional()
    torch_compile_debug: list[str] | None = optional()
    warnings: list[str] | None = optional()
    notes: list[str] | None = optional()
    script: ScriptEnd | None = optional()
    # airctl bisect: what this step of a bisection changed (docs/bisect.md)
    bisect: BisectStep | None = optional()
    imported: Imported | None = optional()  # airctl import: sources, logs, ranks, notes, problems
    # multi-rank runs (docs/multi-rank.md): the top ledger lists its ranks, each rank ledger says which it is
    launcher: Launcher | None = optional()
    world_size: int | None = optional()
    ranks: list[RankEntry] | None = optional()
    rank: int | None = optional()  # a rank's own ledger: its global rank
    local_rank: int | None = optional()
    restart_count: int | None = optional()
    pid: int | None = optional()  # the rank's process (airctl's watchdog stops it by this id)
    divergence: list[Divergence] | None = optional()  # the first difference between the ranks' collectives

    @classmethod
    def read(cls, data: Any, file: str | None = None) -> RunIndex:
        """A parsed ``index.json`` checked and typed (``file`` names it in errors)."""
        if not isinstance(data, dict):
            raise LedgerError(f"malformed {INDEX}: not a JSON object", file=file)
        if not isinstance(data.get("graphs"), list):
            raise LedgerError(f"{INDEX} has no 'graphs' list", file=file, line=1)
        return cls.from_json(data, file=file)

    # -- lookups -------------------------------------------------------------------------------
    def graph(self, graph_id: str) -> GraphEntry | None:
        return next((g for g in self.graphs if g.id == graph_id), None)

    def graph_ids(self) -> list[str]:
        return [g.id for g in self.graphs]

    @property
    def is_multi_rank(self) -> bool:
        """The top ledger of a multi-rank run: its graphs are in the rank ledgers (``ranks/<rank>``)."""
        return self.ranks is not None

    def stages(self, graph_id: str | None = None) -> list[StageRef]:
        """Every stage (of one graph, or of all graphs in order) with its graph id."""
        return [StageRef(graph_id=g.id, entry=s) for g in self.graphs
                if graph_id is None or g.id == graph_id for s in g.stages]

    @property
    def run_mode(self) -> Mode | None:
        """The mode the run compiled with (older ledgers kept it under ``config.mode``)."""
        config = self.extra.get("config")
        return parse_mode(self.mode or (config.get("mode") if isinstance(config, dict) else None))

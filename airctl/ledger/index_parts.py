"""The nested objects of ``index.json``, typed: what ``execution``, ``model``, ``error_detail``, … hold.

The run index's records (:mod:`airctl.ledger.index`) name the run's parts; the small objects
inside them are these ``TypedDict`` records. They are plain dicts at run time, so the file's JSON shape
is exactly what airctl always wrote and every reader keeps using ``index.execution["races"]``;
a type checker sees the keys, and :meth:`~airctl.ledger.record.Record.from_json` checks each
known key's type on read (``malformed index.json: 'execution.matches_eager' is a string, expected
a boolean``). Every key is optional (``total=False``): ledgers written before a key existed still
load. Keys not listed here are kept as they are (another tool's, a newer airctl's).

>>> execution: Execution = {"matches_eager": True, "max_abs_error": 0.0, "races": []}
>>> execution["matches_eager"]
True
"""

from __future__ import annotations

from typing import Any, TypedDict


class ProcessInfo(TypedDict, total=False):
    """``process``: who writes the index (:mod:`airctl.ledger.liveness`)."""

    pid: int
    host: str
    start_ticks: int | None  # the process's start time (Linux /proc ticks): a reused pid is not it


class BackendInfo(TypedDict, total=False):
    """``backend``: what ``--backend`` resolved to, and why."""

    name: str  # sim | npu
    reason: str | None


class ModelInfo(TypedDict, total=False):
    """``model``: compile's script (``path``, ``resolved``, ``sha256``, ``entry``, ``found_by``);
    ``airctl run``'s and torchrun's script (``path``, ``argv``)."""

    path: str
    resolved: str | None
    sha256: str | None
    entry: str | None
    found_by: str | None  # how the model and inputs were found (get_model(), module-level model, ...)
    argv: list[str]


class Race(TypedDict, total=False):
    """One row of ``execution.races``: two streams touching one buffer without an order between them."""

    graph: str | None
    reader: str | None  # the node that read the buffer ...
    producer: str | None  # ... and the node that wrote it
    reader_stream: Any
    producer_stream: Any
    reader_source: str | None
    producer_source: str | None
    message: str | None
    dynamo_graph: int  # airctl run: the graph it was seen in


class Execution(TypedDict, total=False):
    """``execution`` (run-level, and per graph for ``airctl run``): the compiled result against eager."""

    matches_eager: bool | None
    max_abs_error: float | None
    outputs: int | None
    atol: float | None
    rtol: float | None
    mismatches: list[str]
    races: list[Race]
    # airctl run: the graphs checked, and how
    graphs: int
    graphs_checked: int
    not_checked: list[str]
    reference: str
    checked: bool
    calls_checked: int


class UnconvertibleOp(TypedDict, total=False):
    """One op TorchAir cannot convert to GE (:class:`airctl.verify.converter_coverage.Unconvertible`)."""

    op: str
    reason: str  # no converter | stub | converter fails
    detail: str | None
    count: int  # nodes calling it
    nodes: list[str]  # the first 20
    source: str | None  # the first node's line
    module: str | None  # the nn.Module holding the first node
    workaround: str | None


class ErrorDetail(TypedDict, total=False):
    """``error_detail``: the run's error as :meth:`airctl.errors.AirctlError.to_json` gives it, plus
    ``unconvertible`` (TorchAir cannot convert the graph to GE) or ``exit_code`` (a script, a rank)."""

    type: str
    message: str | None
    file: str | None
    line: int | None
    column: int | None
    node: str | None
    hint: str | None
    unconvertible: list[UnconvertibleOp]
    exit_code: int | None
    signal: str | None  # a rank ended by a signal: SIGKILL, ...
    traceback: str | None
    where: str | None  # ProcessExit: the file and line of os._exit


class FindingRow(TypedDict, total=False):
    """One row of ``findings``, ``fixed_findings`` and ``other_modes`` (:class:`airctl.verify.findings.Finding`)."""

    rule: str
    severity: str  # error | warning | info
    mode: str | None
    message: str
    nodes: list[str]
    source: str | None
    hint: str | None
    ref: str | None
    graph: str | None
    stage: str | None  # where it first appeared
    fixed_by: str | None  # fixed_findings: the pass that removed it
    other_mode: str | None  # other_modes: the mode it was checked under


class CaptureRow(TypedDict, total=False):
    """One row of ``captures``: npugraph_ex captured, recaptured or fell back to eager (docs/sim.md)."""

    graph: str
    graph_name: str | None
    event: str  # capture | recapture | fallback | stale_replay (rule R21: validation skipped, an input moved)
    call: int | None
    inputs: list[int] | None  # stale_replay: the mutated inputs (positions) that moved since the capture
    reason: str | None
    key: Any  # npugraph_ex's graph key: shapes and symbol values
    seq: float
    file: str | None
    line: int | None


class CompilerRow(TypedDict, total=False):
    """One row of ``compilers`` (``airctl run``): a TorchAir config the script compiled with."""

    via: str
    mode: str | None


class ProfileRow(TypedDict, total=False):
    """One row of ``profiles``: a profiler folder the run wrote (or an import found)."""

    path: str
    files: list[str]
    file_count: int


class ScriptEnd(TypedDict, total=False):
    """``script`` (``airctl run``): how the user's script ended."""

    exit_code: int | None
    ended_by: str | None  # os._exit(0) at file:line


# a TorchAir pass a bisect step switched off, where it would have run (``pass`` is a keyword: no class syntax)
SkippedPass = TypedDict("SkippedPass", {"graph": str, "pass": str}, total=False)


class BisectStep(TypedDict, total=False):
    """``bisect``: what this step of ``airctl bisect`` changed (docs/bisect.md)."""

    step: int
    level: str  # start | yaml | torchair | placements | culprit
    purpose: str | None
    yaml_passes: list[str] | None
    torchair_off: list[str]
    placements: dict[str, list[int]] | None  # the culprit YAML pass -> the units kept
    torchair_skipped: list[SkippedPass]


class Imported(TypedDict, total=False):
    """``imported`` (``airctl import``, docs/import.md): where the files came from, and what was not read."""

    sources: list[str]
    logs: list[dict[str, str]]
    ranks: list[int]
    pids: list[int]
    torch_compile_debug: list[str]
    traces: list[str]
    listings: list[str]
    skipped: list[str]
    notes: list[str]
    problems: list[str]


class Launcher(TypedDict, total=False):
    """``launcher``: a multi-rank run's launcher, as started (docs/multi-rank.md)."""

    name: str  # torchrun
    argv: list[str]
    nproc_per_node: Any  # torchrun's value as given: a number, or gpu / cpu / auto
    nnodes: Any
    collective_timeout_s: float | None
    ranks_started: str | None  # forked (under sim) or spawned
    fork_server_pid: int


class Divergence(TypedDict, total=False):
    """One row of ``divergence``: where the ranks' collectives first differ (``kind``: issued, compiled)."""

    kind: str
    message: str | None
    graph: str | None  # compiled: the graph only some ranks compiled, or whose collectives differ
    nodes: list[str]
    position: int  # issued: the collective's number
    where: str  # issued
    ranks: dict[str, Any]  # issued: rank -> its collective there, null past its end


class WarningMessage(TypedDict, total=False):
    message: str
    count: int


class TorchAirWarnings(TypedDict, total=False):
    """``torchair_warnings``: TorchAir's Python warnings of the run (``airctl compile -v`` prints them)."""

    count: int
    by_kind: dict[str, int]  # "<Category> at <file>:<line>" -> how many
    messages: list[WarningMessage]


class EagerCheck(TypedDict, total=False):
    """A YAML stage's ``eager_check``: the graph run eagerly before and after the pass (None: could not tell)."""

    matches: bool | None
    max_abs_error: float | None
    mismatches: list[str]
    skipped: str | None


class Placement(TypedDict, total=False):
    """One unit a YAML pass placed (a stage's ``placements``)."""

    unit: str
    nodes: list[str]


class RankLast(TypedDict, total=False):
    """A rank's ``last``: where it was last seen (:meth:`airctl.ledger.collectives.RankActivity.last`)."""

    state: str  # blocked | running | outside compiled graphs
    graph: str | None
    in_graph: bool
    node: str | None
    op: str | None
    stream: Any
    since_s: float  # blocked: for how long
    collective: int | None  # the collective's sequence number ...
    collective_graph: str | None  # ... the graph it belongs to
    describe: str | None

"""What ``airctl check PATH`` can read, turned into graphs to verify.

PATH is one of: an airctl graph JSON; a ledger folder (read by :class:`~airctl.ledger.reader.Ledger`:
each graph's default ``check`` stage, docs/ledger.md, or ``--stage NAME``); a TorchAir dump
(``.pbtxt``/``.txt``/``.py``, read by ``airctl.io.read.read_graph``); an FX graph saved as text (a
``graph():`` listing, ``print_readable`` code); a TorchAir DEBUG log, whatever its name (a compile
ledger's ``log.txt.gz`` too): each graph's final FX listing ("after fx graph optimization"; else
the last listing TorchAir printed for it), plus what only the log shows
(:mod:`airctl.verify.log_checks`). A model script is compiled first by
:mod:`airctl.pipeline.source`. Every unreadable input raises
:class:`~airctl.errors.GraphReadError` (a malformed ledger :class:`~airctl.errors.LedgerError`) with
the file (and line where the format has one), which the CLI maps to exit code 2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from airctl.errors import GraphReadError
from airctl.graph.model import Graph
from airctl.io.compressed import logical_suffix, read_head
from airctl.io.log_records import is_torchair_log
from airctl.ledger.defaults import Request
from airctl.ledger.reader import Ledger
from airctl.modes import Mode
from airctl.verify.findings import Finding

DUMP_SUFFIXES = (".pbtxt", ".txt")  # and TorchAir's .py dumps, told apart from model scripts by content


@dataclass
class CheckTarget:
    label: str  # printed with the findings: the file, or "<ledger graph id>/<stage>"
    graph: Graph
    mode: Mode | None = None  # the mode the ledger or log was compiled with, when it says
    findings: list[Finding] = field(default_factory=list)  # found outside the graph (a log's other lines)


def load_targets(path: Path | str, *, stage: str | None = None) -> list[CheckTarget]:
    path = Path(path)
    if not path.exists():
        raise GraphReadError("no such file or folder", file=str(path))
    if path.is_dir():
        if not Ledger.is_ledger(path):
            raise GraphReadError("not a ledger (no index.json)", file=str(path),
                                 hint=f"a folder TorchAir wrote becomes a ledger with `airctl import {path}`; "
                                      "then check that ledger")
        return ledger_targets(path, stage)
    if is_torchair_log(read_head(path)):
        return log_targets(path)
    suffix = logical_suffix(path)  # the ledger's files are gzip-compressed: x.pbtxt.gz is a .pbtxt
    if suffix == ".json":
        return [CheckTarget(str(path), read_graph_file(path))]
    if suffix in DUMP_SUFFIXES:
        return [CheckTarget(str(path), read_graph_file(path))]
    if suffix == ".py":
        if _is_py_dump(path):
            return [CheckTarget(str(path), read_graph_file(path))]
        raise GraphReadError("a model script is not a graph", file=str(path),
                             hint="compile it first (`airctl compile`), then check the ledger folder")
    from airctl.io.read import sniff

    if sniff(read_head(path)) is not None:
        return [CheckTarget(str(path), read_graph_file(path))]
    raise GraphReadError(f"cannot tell what {path.suffix or 'this file'} is", file=str(path), line=1,
                         hint="pass an airctl graph .json, a ledger folder, a TorchAir .pbtxt/.txt dump, a TorchAir "
                              "DEBUG log, an FX `graph():` listing or a model .py")


def log_targets(path: Path) -> list[CheckTarget]:
    """Each graph a TorchAir log lists: its final FX listing (else its last), and the log's own findings."""
    from airctl.io.fx_listing import parse_fx_listing
    from airctl.io.torchair_log import read_torchair_log
    from airctl.verify.log_checks import log_findings

    log = read_torchair_log(path)
    targets = []
    for unit in log.units:
        listing = unit.listing("fx-final") or (unit.listings[-1] if unit.listings else None)
        if listing is None:
            continue
        name = unit.name or f"graph@{unit.first_line}"
        graph = parse_fx_listing(listing.text, str(path), name, first_line=listing.line)
        targets.append(CheckTarget(f"{path}:{listing.line} ({name}, {listing.site})", graph, log.mode,
                                   log_findings(unit, str(path), log.mode or Mode.MAX_AUTOTUNE)))
    if not targets:
        raise GraphReadError("the log lists no FX graph", file=str(path),
                             hint="TorchAir prints its graphs at DEBUG level: logger.setLevel(logging.DEBUG) "
                                  "(from torchair import logger) or TORCH_COMPILE_DEBUG=1 before running the script")
    return targets


def read_graph_file(path: Path) -> Graph:
    """A graph file (airctl .json, TorchAir .pbtxt/.txt/.py dump), read and validated as ``airctl
    dump``/``diff`` read it: same errors, with file and line."""
    from airctl.io.read import read_graph

    return read_graph(path)


def _is_py_dump(path: Path) -> bool:
    from airctl.io.fx_code import is_fx_code
    from airctl.io.py_dump import is_torchair_py_dump

    try:
        text = read_head(path)  # as read_graph tells a .py dump: by its head
        return is_torchair_py_dump(text) or is_fx_code(text)
    except (OSError, GraphReadError):
        return False


def ledger_targets(root: Path, stage: str | None) -> list[CheckTarget]:
    """Each graph's ``--stage`` or default stage (docs/ledger.md: fx-final, else the last FX stage, else the
    last stage of a graph imported from GE dumps only)."""
    ledger = Ledger.open(root)
    mode = ledger.index.run_mode
    targets: list[CheckTarget] = []
    loaded: dict[str, Graph] = {}  # stage file -> graph: the run-level rules read the same stages again
    for gid in ledger.graph_ids():
        found = ledger.find_stage(stage, gid) if stage is not None else ledger.default_stage(Request.CHECK, gid)
        if found is not None:
            entry = ledger.index.graph(gid)
            graph_mode = (entry.graph_mode if entry is not None else None) or mode
            loaded[found.file] = graph = ledger.load(found)
            targets.append(CheckTarget(f"{gid}/{found.name}", graph, graph_mode))
    if not targets:
        raise GraphReadError("the ledger holds no graph stage to check", file=str(ledger.index_path),
                             hint="the run failed before any graph was captured; see its error in index.json")
    if stage is None:  # the rules that need the whole run (R16, R21) read the same stages
        from airctl.verify.run_checks import run_findings

        for _stage, f in run_findings(ledger.index, lambda ref: loaded.get(ref.file) or ledger.load(ref)):
            next((t for t in targets if t.label.startswith(f"{f.graph}/")), targets[0]).findings.append(f)
    return targets

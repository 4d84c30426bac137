"""What ``airctl check PATH`` can read, turned into graphs to verify.

PATH is one of: an airctl graph JSON; a ledger folder (read by :class:`~airctl.ledger.reader.Ledger`:
each graph's default ``check`` stage, docs/ledger.md, or ``--stage NAME``); a TorchAir dump
(``.pbtxt``/``.txt``/``.py``, read by ``airctl.io.read.read_graph``). A model script is compiled
first by :mod:`airctl.pipeline.source`. Every unreadable input raises
:class:`~airctl.errors.GraphReadError` (a malformed ledger :class:`~airctl.errors.LedgerError`) with
the file (and line where the format has one), which the CLI maps to exit code 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from airctl.errors import GraphReadError
from airctl.graph.model import Graph
from airctl.ledger.defaults import Request
from airctl.ledger.reader import Ledger

DUMP_SUFFIXES = (".pbtxt", ".txt")  # and TorchAir's .py dumps, told apart from model scripts by content


@dataclass
class CheckTarget:
    label: str  # printed with the findings: the file, or "<ledger graph id>/<stage>"
    graph: Graph
    mode: str | None = None  # the mode the ledger was compiled with, when it says


def load_targets(path: Path | str, *, stage: str | None = None) -> list[CheckTarget]:
    path = Path(path)
    if not path.exists():
        raise GraphReadError("no such file or folder", file=str(path))
    if path.is_dir():
        return ledger_targets(path, stage)
    suffix = path.suffix.lower()
    if suffix == ".json":
        return [CheckTarget(str(path), read_graph_file(path))]
    if suffix in DUMP_SUFFIXES:
        return [CheckTarget(str(path), read_graph_file(path))]
    if suffix == ".py":
        if _is_py_dump(path):
            return [CheckTarget(str(path), read_graph_file(path))]
        raise GraphReadError("a model script is not a graph", file=str(path),
                             hint="compile it first (`airctl compile`), then check the ledger folder")
    raise GraphReadError(f"cannot tell what {path.suffix or 'this file'} is", file=str(path),
                         hint="pass an airctl graph .json, a ledger folder, a TorchAir .pbtxt/.txt dump or a model .py")


def read_graph_file(path: Path) -> Graph:
    """A graph file (airctl .json, TorchAir .pbtxt/.txt/.py dump), read and validated as ``airctl
    dump``/``diff`` read it: same errors, with file and line."""
    from airctl.io.read import read_graph

    return read_graph(path)


def _is_py_dump(path: Path) -> bool:
    from airctl.io.py_dump import is_torchair_py_dump

    try:
        return is_torchair_py_dump(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


def ledger_targets(root: Path, stage: str | None) -> list[CheckTarget]:
    """Each graph's ``--stage`` or default stage (docs/ledger.md: fx-final, else the last FX stage)."""
    ledger = Ledger.open(root)
    mode = ledger.index.run_mode
    targets: list[CheckTarget] = []
    for gid in ledger.graph_ids():
        found = ledger.find_stage(stage, gid) if stage is not None else ledger.default_stage(Request.CHECK, gid)
        if found is not None:
            targets.append(CheckTarget(f"{gid}/{found.name}", ledger.load(found), mode))
    if not targets:
        raise GraphReadError("the ledger holds no FX stage to check", file=str(ledger.index_path),
                             hint="use --stage NAME to pick a stage")
    return targets

"""Resolve a command's SOURCE argument (a graph file, a TorchAir dump, or a ledger stage) to a graph.

``airctl dump`` and ``airctl diff`` accept the same sources:

- a graph file: TorchAir ``.pbtxt``/``.txt``/``.py`` dump or airctl ``.json`` (:func:`read_graph`);
- a ledger folder (has ``index.json``, see docs/ledger.md): a stage picked by name or index, read
  through :class:`airctl.ledger.reader.Ledger`; without one, the request's default stage
  (:func:`airctl.ledger.defaults.default_stage`, the table in docs/ledger.md);
- a ``.py`` *model script* (told apart from a TorchAir py dump by content, :func:`is_model_script`)
  is not a graph: :mod:`airctl.pipeline.run.source` compiles it first, then reads the ledger.
"""

from __future__ import annotations

from pathlib import Path

from airctl.errors import GraphReadError, LedgerError
from airctl.graph.model import Graph
from airctl.io.compressed import read_bytes
from airctl.io.py_dump import is_torchair_py_dump
from airctl.io.read import read_graph
from airctl.ledger.defaults import Request, StageRequest
from airctl.ledger.reader import Ledger
from airctl.ledger.record import INDEX


def is_ledger(path: Path) -> bool:
    return path.is_dir() and (path / INDEX).is_file()


def is_model_script(path: Path | str) -> bool:
    """A ``.py`` file that is not a TorchAir py dump (GE calls, or FX code): a model script, to be compiled first."""
    path = Path(path)
    return path.suffix == ".py" and path.is_file() and not _py_dump(path)


def load_source(source: Path | str, stage: str | None = None,
                request: StageRequest | Request = Request.DUMP) -> Graph:
    """The graph a SOURCE argument names (see the module docstring); ``request`` picks a ledger's
    stage when ``stage`` names none."""
    path = Path(source)
    if is_model_script(path):
        raise GraphReadError("a model script is not a graph", file=str(path),
                             hint="compile it first (`airctl compile`), then pass the ledger folder")
    if path.is_dir():
        if not is_ledger(path):
            raise LedgerError(f"not a ledger: no {INDEX}", file=str(path),
                              hint="pass a graph file, or the run folder `airctl compile` printed")
        ledger = Ledger.open(path)
        return ledger.load(ledger.find_stage(stage, request=request))
    if stage is not None:
        raise GraphReadError("--stage/--from/--to need a ledger folder", file=str(path),
                             hint="a single graph file has no stages")
    if not path.exists():
        raise GraphReadError("no such file", file=str(path))
    return read_graph(path)


def _py_dump(path: Path) -> bool:
    try:
        text = read_bytes(path).decode("utf-8", errors="replace")
    except (OSError, GraphReadError):
        return True  # let read_graph report the error with its usual wording
    from airctl.io.fx_code import is_fx_code

    return is_torchair_py_dump(text) or is_fx_code(text)

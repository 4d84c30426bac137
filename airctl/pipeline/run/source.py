"""The one SOURCE resolver: what a command's argument names, whatever form it takes.

- **a run** (``show``, ``repro``, ``export``, ``bisect``, ``--run`` of every command): a run id, a
  unique part of one, ``latest``, a ledger folder or a rank's folder (``ranks/<rank>``), or nothing
  (the current run of ``--out``) — :func:`run_folder`, by :func:`airctl.ledger.runs.resolve_run`;
- **a graph** (``dump``, ``diff``): a graph file (TorchAir ``.pbtxt``/``.txt``/``.py`` dump, airctl
  ``.json``), a stage of a ledger (by name or index; without one the request's default stage,
  docs/ledger.md), or a model script, compiled first (lower layers never compile) —
  :func:`load_source`;
- **what to check** (``check``): the same, plus logs and listings (:mod:`airctl.verify.inputs`) —
  :func:`check_targets`.

A model script's ledger goes under ``./airctl-runs`` like any other run.
"""

from __future__ import annotations

from pathlib import Path

from airctl.errors import GraphReadError, LedgerError, ModelScriptError
from airctl.graph.model import Graph
from airctl.io.read import read_graph
from airctl.io.source import is_model_script
from airctl.ledger.defaults import Request, StageRequest
from airctl.ledger.reader import Ledger
from airctl.ledger.runs import resolve_run
from airctl.ledger_files import INDEX, is_ledger
from airctl.modes import MAX_AUTOTUNE


def run_folder(run: str | Path | None, out_dir: Path | str) -> Path:
    """The ledger folder of a run argument (see the module); LedgerError (exit 2) naming what to do."""
    return resolve_run(Path(out_dir), run)


def compile_script(path: Path, mode: str, *, command: str, passes: Path | str | None = None,
                   verify: bool = True, report: bool = True) -> Path:
    """Compile a model script into ./airctl-runs and return its ledger folder (imports torch)."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.pipeline.target import Target

    target = Target(path, mode=mode, passes_file=Path(passes) if passes else None)
    result = compile_model(CompileRequest(target, command=command, verify=verify, report=report))
    if not result.index.graphs:
        if result.error is not None:
            raise result.error
        raise ModelScriptError("the script compiled no graph", file=str(path))
    return result.ledger_dir


def load_source(source: Path | str, stage: str | None = None, request: StageRequest | Request = Request.DUMP,
                mode: str = MAX_AUTOTUNE) -> Graph:
    """The graph a SOURCE names; a model script is compiled first (``airctl dump``/``diff``)."""
    path = Path(source)
    if is_model_script(path):
        path = compile_script(path, mode, command="dump")
    return read_source(path, stage, request)


def read_source(source: Path | str, stage: str | None = None,
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



def check_targets(path: Path | str, *, stage: str | None = None, passes: Path | str | None = None,
                  mode: str | None = None) -> list:
    """What ``airctl check PATH`` verifies; a model script is compiled (with ``passes``) first."""
    from airctl.verify.inputs import ledger_targets, load_targets

    path = Path(path)
    if is_model_script(path):
        ledger = compile_script(path, mode or MAX_AUTOTUNE, command="check", passes=passes, verify=False,
                                report=False)
        return ledger_targets(ledger, None)
    return load_targets(path, stage=stage)

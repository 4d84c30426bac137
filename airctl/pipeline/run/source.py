"""Resolve a command's SOURCE when it may be a model script: compile it first, then read the ledger.

``airctl dump``, ``diff`` and ``check`` take a graph file, a ledger folder, or a model script.
Reading files and ledgers is :mod:`airctl.io.source` and :mod:`airctl.verify.inputs`; a model
script needs a compile, which only the pipeline does (lower layers never compile). The ledger it
leaves goes under ``./airctl-runs`` like any other run.
"""

from __future__ import annotations

from pathlib import Path

from airctl.errors import ModelScriptError
from airctl.graph.model import Graph
from airctl.io.source import is_model_script
from airctl.ledger.defaults import Request, StageRequest
from airctl.modes import MAX_AUTOTUNE


def compile_script(path: Path, mode: str, *, command: str, passes: Path | str | None = None,
                   verify: bool = True, report: bool = True) -> Path:
    """Compile a model script into ./airctl-runs and return its ledger folder (imports torch)."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    result = compile_model(CompileRequest(model_path=path, mode=mode, command=command, verify=verify,
                                          report=report, passes_file=str(passes) if passes else None))
    if not result.index.graphs:
        if result.error is not None:
            raise result.error
        raise ModelScriptError("the script compiled no graph", file=str(path))
    return result.ledger_dir


def load_source(source: Path | str, stage: str | None = None, request: StageRequest | Request = Request.DUMP,
                mode: str = MAX_AUTOTUNE) -> Graph:
    """The graph a SOURCE names; a model script is compiled first (``airctl dump``/``diff``)."""
    from airctl.io import source as io_source

    path = Path(source)
    if is_model_script(path):
        path = compile_script(path, mode, command="dump")
    return io_source.load_source(path, stage, request)


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

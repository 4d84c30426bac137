"""``airctl run``: run an unmodified TorchAir script with airctl's hooks on every backend it makes.

>>> result = run_script(RunRequest(Target(Path("train.py")), args=["--steps", "2"]))   # doctest: +SKIP
>>> result.exit_code, result.ledger_dir                                         # doctest: +SKIP
(0, PosixPath('airctl-runs/20261122-101500-train-3f2a'))

The script runs as ``python SCRIPT.py ARGS...`` would run it: ``__name__ == "__main__"``,
``sys.argv == [SCRIPT.py, *ARGS]``, the script's folder first on ``sys.path``, the working
directory unchanged — in this process, after the backend is prepared (``sim``: the stand-ins
for ``torch_npu``/``torchair``; both: ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` when torch-npu is
installed without CANN, set before the script imports torch). While it runs, a
:class:`~airctl.pipeline.script.hooks.RunSession` is active and
:class:`~airctl.pipeline.script.hooks.RunHooks`
wrap TorchAir's backend factories, so each graph the script compiles lands in the ledger with
the same stages as ``airctl compile``, plus a per-graph execution check
(:mod:`~airctl.pipeline.script.check`).

Ledger additions for ``run`` (layout in docs/ledger.md, the rest as for compile)::

    index.json  command "run"; model {path, argv}; compilers [{via, mode, graph_dump,
                run_eagerly_set_by_airctl}]; graphs[].execution; execution (all graphs);
                profiles [{path, files}]; torch_compile_debug [folders]; warnings; notes;
                script {exit_code}; status ok | failed | mismatch
    torchair/   copies of the dumps TorchAir wrote where the script asked (dumps[].source)
    log.txt     TorchAir's log lines at the level the script set, and airctl's notes

Whatever the script does, the ledger ends with what was captured; a script failure is the
script's (traceback and exit code as Python shows them, :mod:`~airctl.pipeline.script.errors`).
"""

from __future__ import annotations

import os
import runpy
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.backends import Backend, choose
from airctl.errors import AirctlError, ExecutionMismatch, ModelScriptError
from airctl.hooks.capture import observing
from airctl.ledger.index import RunIndex
from airctl.limits import MODEL_SCRIPT_BYTES
from airctl.pipeline.compile.seed import seed_all
from airctl.pipeline.compile.why_events import recording_why
from airctl.pipeline.run.execution import RunExecution
from airctl.pipeline.run.finish import verify_instruments
from airctl.pipeline.run.lifecycle import Run
from airctl.pipeline.run.rank import RankRun, collectives_of, timeout_of
from airctl.pipeline.script.check import run_summary
from airctl.pipeline.script.errors import ScriptEnd, from_exception, from_system_exit
from airctl.pipeline.script.hooks import RunHooks, RunSession
from airctl.pipeline.script.logs import RunLog, tee_torchair_log
from airctl.pipeline.target import Progress, Target
from airctl.safe_files import open_regular, too_large
from airctl.torch_env import ensure_torch_importable


@dataclass
class RunRequest:
    target: Target  # the script (model_path), backend, tolerance, seed; the script chooses its own modes
    args: Sequence[str] = ()
    out_dir: Path = Path("airctl-runs")
    check: bool = True  # compare each compiled graph with its Dynamo graph run eagerly
    verify: bool = True  # verify-each: the static verifier after every pass
    report: bool = True
    rank: RankRun | None = None  # a rank of a multi-rank run (pipeline/ranks/worker.py)


@dataclass
class RunResult:
    ledger_dir: Path
    index: RunIndex
    backend: Backend | None
    end: ScriptEnd  # how the script ended (exit code, its exception)
    error: AirctlError | None = None  # airctl's own verdict: bad request, backend, mismatch
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.end.failed:
            return self.end.exit_code
        if self.error is not None:
            return int(self.error.exit_code)
        return 0


def _check_script(path: Path) -> None:
    if not path.exists():
        raise ModelScriptError(f"script not found: {path}", file=str(path))
    if path.is_dir():
        raise ModelScriptError(f"{path} is a folder, not a script",
                               hint="give the .py file; `python -m package` style runs are not supported")
    with open_regular(path, error=ModelScriptError, hint="a script is a Python file; give its path") as f:
        if os.fstat(f.fileno()).st_size > MODEL_SCRIPT_BYTES:
            raise too_large(path, MODEL_SCRIPT_BYTES, "script", ModelScriptError)


class _ScriptContext:
    """``sys.argv``, ``sys.path[0]`` as ``python SCRIPT.py ARGS`` sets them, restored after."""

    def __init__(self, script: Path, args: Sequence[str]) -> None:
        self.argv = [str(script), *args]
        self.path0 = str(script.resolve().parent)

    def __enter__(self) -> None:
        self._argv, self._path = sys.argv[:], sys.path[:]
        sys.argv[:] = self.argv
        sys.path.insert(0, self.path0)

    def __exit__(self, *exc: Any) -> None:
        sys.argv[:] = self._argv
        sys.path[:] = self._path


def run_script(req: RunRequest, progress: Progress | None = None) -> RunResult:
    script = req.target.model_path
    # absolute: the script may chdir, and the ledger must stay where the user asked
    fields = dict(command="run", mode=None, model={"path": str(script), "argv": [str(script), *req.args]},
                  **({"seed": req.target.seed} if req.target.seed is not None else {}),
                  **(req.rank.fields if req.rank is not None else {}))
    root = Path(req.rank.root).absolute() if req.rank is not None else None
    with Run.of(Path(req.out_dir).absolute(), script.stem, root, script_exit_code=True,
                what=f"the script {script}", **fields) as run:
        return _run_body(req, run, progress)


def _run_body(req: RunRequest, run: Run, progress: Progress | None) -> RunResult:
    ledger = run.ledger
    say = progress or (lambda _msg: None)
    notes: list[str] = []
    open_logs: list[RunLog] = []

    def note(message: str) -> None:
        notes.append(message)
        say(message)
        for log in open_logs:
            log.note(message)

    script = req.target.model_path
    backend: Backend | None = None
    end = ScriptEnd(0)
    try:
        _check_script(script)
        autoload = ensure_torch_importable()  # before anything (the script included) imports torch
        if autoload:
            notes.append(autoload)
        backend = choose(req.target.backend)
        ledger.set(backend=backend.to_json())
        say(f"backend {backend.name}: {backend.reason}")
    except AirctlError as error:
        run.fail(error)
        return RunResult(ledger.root, ledger.run_index, backend, end, error, notes)

    runs = RunExecution(collectives=collectives_of(req.rank), collective_timeout_s=timeout_of(req.rank))
    session = RunSession(ledger)
    hooks = RunHooks(session, backend, note, runs, check=req.check, atol=req.target.atol,
                     make_instruments=verify_instruments if req.verify else None)
    t0 = time.perf_counter()
    try:
        with backend.session(runs, script) as torchair:
            ledger.set_timing("backend_seconds", time.perf_counter() - t0)
            t0 = time.perf_counter()
            with tee_torchair_log(ledger.root / "log.txt") as log:
                for n in notes:
                    log.note(n)
                open_logs.append(log)
                try:
                    with observing(session), recording_why(session), hooks.installed(torchair), \
                            _ScriptContext(script, req.args):
                        seed_all(req.target.seed)
                        runpy.run_path(str(script), run_name="__main__")
                except SystemExit as e:
                    end = from_system_exit(e)
                except KeyboardInterrupt:
                    raise
                except BaseException as e:  # noqa: BLE001 - the script's failure, reported as Python would
                    end = from_exception(e)
                finally:
                    for warning in hooks.warnings():
                        note("warning: " + warning)
                    ledger.set(warnings=hooks.warnings())
                    hooks.collect_profiles()
                    hooks.collect_debug_dirs()
                    session.finalize()
                    for n in backend.notes():
                        note(n)
    except AirctlError as error:  # the backend could not start
        run.fail(error)  # no findings, no report: the capture never began
        return RunResult(ledger.root, ledger.run_index, backend, end, error, notes)
    ledger.set_timing("script_seconds", time.perf_counter() - t0)
    run.session = session  # its findings are recorded as the run ends
    return _finish(req, run, hooks, backend, end, notes)


def _finish(req: RunRequest, run: Run, hooks: RunHooks, backend: Backend, end: ScriptEnd,
            notes: list[str]) -> RunResult:
    """The run's end from how the script ended: failed (its exception or exit code), mismatch (a
    compiled graph's outputs differ from its Dynamo graph run eagerly), else ok."""
    ledger = run.ledger
    execution = run_summary(hooks.checks)
    ledger.set(execution=execution, script={"exit_code": end.exit_code}, notes=notes)
    error: AirctlError | None = None
    if end.failed:
        detail: dict[str, Any] = {"type": "ScriptError", "exit_code": end.exit_code}
        if end.exception is not None:
            e = end.exception
            message = f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__
            detail.update(exception=type(e).__name__, message=str(e), traceback=end.traceback)
        else:
            message = end.message or f"the script exited with code {end.exit_code}"
        run.fail(message, detail, report=req.report)
    elif execution is not None and execution["matches_eager"] is False:
        error = ExecutionMismatch(
            "compiled graphs differ from their Dynamo graphs run eagerly: " + "; ".join(execution["mismatches"][:5]),
            hint="a pass changed the results (TorchAir requires passes to keep them); "
                 "compare the stages with `airctl diff`, or skip the check with --no-check")
        run.fail(error, status="mismatch", report=req.report)
    else:
        run.finish(report=req.report)
    return RunResult(ledger.root, ledger.run_index, backend, end, error, notes)

"""What ``airctl passes apply`` and ``airctl passes explain`` run, as library calls returning data.

:func:`apply_passes` builds the hooks, compiles the model with them (``plan=True`` stops after the
passes, before GE conversion or aclgraph codegen) and reads back, from the ledger, one row per
YAML pass and graph: changed, node delta, time, inserted/removed nodes, the result check and a
rename-proof unified diff against the stage before it. A pass error that Dynamo wrapped is
unwrapped (``PassHooks.errors``) and written back into ``index.json``, so the ledger names the pass.
A pass file that does not load still leaves a ledger with the error: every run keeps one.

:func:`explain_passes` compiles in explain mode (selectors recorded, never fatal, stop after the
passes) and returns what each selector matched or its closest candidates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError, ExecutionMismatch, PassError, SpecError
from airctl.ledger.index import RunIndex
from airctl.modes import Mode
from airctl.pipeline.pass_hooks import PassHooks, build_hooks
from airctl.pipeline.run.current import model_record
from airctl.pipeline.target import Target

COMMAND = "passes apply"


@dataclass
class AppliedPass:
    name: str  # the YAML pass name
    graph: str
    stage: str  # ledger stage name: yaml:<name> or failed:yaml:<name>
    kind: str | None
    changed: bool | None
    nodes: int
    node_delta: int | None
    seconds: float | None
    inserted: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    eager_check: dict[str, Any] | None = None
    skipped: str | None = None
    error: str | None = None
    returned_new_graph: str | None = None
    diff: str | None = None
    snapshot: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ApplyResult:
    pass_file: Path
    ledger_dir: Path | None
    status: str
    passes: list[AppliedPass] = field(default_factory=list)
    execution: dict[str, Any] | None = None
    error: AirctlError | None = None
    warnings: list[AirctlError] = field(default_factory=list)
    plan: bool = False
    mode: Mode | None = None  # the mode that ran (not the current run's, when --mode overrode it)
    index: RunIndex | None = None  # the run's index: findings and races, for the verdicts and --fail-on

    def to_json(self) -> dict[str, Any]:
        return {
            "pass_file": str(self.pass_file), "ledger": str(self.ledger_dir) if self.ledger_dir else None,
            "status": self.status, "mode": self.mode.value if self.mode else None, "plan": self.plan,
            "passes": [p.to_json() for p in self.passes],
            "execution": self.execution, "findings": (self.index.to_json().get("findings") or []) if self.index else [],
            "error": self.error.to_json() if self.error else None,
            "warnings": [w.to_json() for w in self.warnings],
        }


def _failed_ledger(out: Path, model: Path, mode: Mode | str, pass_file: Path, error: AirctlError) -> Path:
    from airctl.pipeline.run.lifecycle import Run

    with Run.create(out, Path(model).stem, command=COMMAND, mode=mode, model=model_record(Path(model), None),
                    passes=str(pass_file)) as run:
        run.fail(error)
        return run.ledger.shown


def _pass_file(target: Target) -> Path:
    if target.passes_file is None:
        raise AirctlError("no pass file to apply", hint="airctl passes apply FILE.yaml")
    return target.passes_file


def pass_runs(ledger_dir: Path, index: RunIndex, with_diff: bool = True) -> list[AppliedPass]:
    """One row per YAML pass stage of every graph of a ledger, with its diff to the stage before."""
    from airctl.io.json_io import read_json
    from airctl.passes.textdiff import unified

    rows: list[AppliedPass] = []
    for graph in index.graphs:
        stages = graph.stages
        for i, s in enumerate(stages):
            if not (s.name.startswith("yaml:") or s.name.startswith("failed:yaml:")):
                continue
            run = AppliedPass(
                name=s.name.split("yaml:", 1)[1], graph=graph.id, stage=s.name, kind=s.pass_kind,
                changed=s.changed, nodes=s.nodes or 0, node_delta=s.node_delta, seconds=s.seconds,
                inserted=s.inserted or [], removed=s.removed or [], eager_check=s.eager_check,
                skipped=s.skipped, error=s.error, returned_new_graph=s.returned_new_graph, snapshot=s.file,
            )
            if with_diff and i > 0 and s.changed is not False:
                prev = stages[i - 1]
                run.diff = unified(read_json(ledger_dir / prev.file), read_json(ledger_dir / s.file),
                                   f"{graph.id}/{prev.name}", f"{graph.id}/{s.name}")
            rows.append(run)
    return rows


def _pass_error(hooks: PassHooks, error: AirctlError | None) -> AirctlError | None:
    """The pass-named error, when the compile failed inside the YAML hooks."""
    named = next((e for e in hooks.errors if isinstance(e, PassError)), None)
    if named is not None:
        return named
    if isinstance(error, ExecutionMismatch):
        changers = [r["pass"] for r in hooks.runs if r.get("changed")]
        unchecked = [r["pass"] for r in hooks.runs if r.get("changed") and not (r.get("eager_check") or {}).get(
            "matches")]
        if unchecked:
            return PassError(
                f"{error.message}; passes that changed the graph without a result check: " + ", ".join(unchecked),
                hint="their result check was off or could not run (see eager_check in the ledger stages)")
        if changers:
            error.hint = ("every YAML pass kept the results when its graph ran eagerly, so the difference comes "
                          "from stream ordering at run time or from TorchAir; `airctl check` the ledger")
    return error


def apply_passes(target: Target, *, out: Path = Path("airctl-runs"), plan: bool = False, with_diff: bool = True,
                 progress: Any = None, report: bool = True, command_line: list[str] | None = None,
                 incremental: bool = False, kept_in: Path | None = None) -> ApplyResult:
    """Compile ``target`` with the passes of its ``passes_file`` (see the module); ``incremental``: from a
    pre-pass graph a run of ``out`` (or of ``kept_in``) kept, where one fits (pipeline/incremental)."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    pass_file, mode = _pass_file(target), target.mode
    try:
        hooks = build_hooks(pass_file)
    except SpecError as e:
        return ApplyResult(pass_file, _failed_ledger(out, target.model_path, mode, pass_file, e), "failed", error=e,
                           plan=plan, mode=mode)
    request = CompileRequest(target, out_dir=out, hooks=hooks, command=COMMAND, stop_after_passes=plan,
                             report=report, command_line=command_line, incremental=incremental, kept_in=kept_in)
    result = compile_model(request, progress=progress)
    error = _pass_error(hooks, result.error)
    if error is not None and error is not result.error and result.session is not None:
        result.session.ledger.set_error(  # keep the pass-named error in index.json
            error.message, dict(error.to_json(), wrapped=result.error.to_json() if result.error else None))
    index = result.index
    return ApplyResult(
        pass_file, result.ledger_dir, index.status or "failed", pass_runs(result.ledger_dir, index, with_diff),
        index.execution, error, list(hooks.warnings), plan, mode=index.run_mode or mode, index=index)


@dataclass
class ExplainResult:
    pass_file: Path
    ledger_dir: Path | None
    rows: list[dict[str, Any]]
    error: AirctlError | None = None

    @property
    def unmatched(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("role") != "apply" and not r.get("matches") and not r.get("optional")]

    def to_json(self) -> dict[str, Any]:
        return {"pass_file": str(self.pass_file), "ledger": str(self.ledger_dir) if self.ledger_dir else None,
                "selectors": self.rows, "unmatched": len(self.unmatched),
                "error": self.error.to_json() if self.error else None}


def explain_passes(target: Target, *, out: Path = Path("airctl-runs"), progress: Any = None,
                   command_line: list[str] | None = None) -> ExplainResult:
    """Compile ``target`` up to its passes, recording what each selector of its ``passes_file`` matches."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    hooks = build_hooks(_pass_file(target), explain=True)
    request = CompileRequest(target, out_dir=out, hooks=hooks, command="passes explain", stop_after_passes=True,
                             report=False, command_line=command_line)
    result = compile_model(request, progress=progress)
    error = result.error
    if error is None and not hooks.explanations:
        error = AirctlError("no graph reached the pass hooks, so no selector could be explained",
                            hint="does the model compile? try `airctl compile` on it")
    return ExplainResult(_pass_file(target), result.ledger_dir, hooks.explanations, error)

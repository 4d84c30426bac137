"""What ``airctl compile`` is asked to do, and what it gives back (:func:`~.compiler.compile_model`).

A request is a :class:`~airctl.pipeline.target.Target` (the model, its mode and every setting a
compiling command shares) and what this one compile does with it: where the ledger goes, which
command it records, the passes as callables, the instruments, and — for a rank of a multi-rank
run — one :class:`~airctl.pipeline.run.rank.RankRun`. Commands built on compile (passes apply,
profile, bisect, repro, check of a model script) pass their target on and fill in the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.execute.compare import Comparison
from airctl.execute.executor import DEFAULT_TIMEOUT_S
from airctl.instrument import Instrument
from airctl.ledger.index import RunIndex
from airctl.pipeline.run.execution import RunExecution
from airctl.pipeline.run.rank import RankRun
from airctl.pipeline.target import Progress, Target

PassFn = Callable[[Any, Any, Any], Any]

__all__ = ["CompileRequest", "CompileResult", "PassFn", "Progress"]


@dataclass
class CompileRequest:
    target: Target
    out_dir: Path = Path("airctl-runs")
    command: str = "compile"
    pre_pass: PassFn | None = None  # TorchAir's post_grad_custom_pre_pass (a raw callable)
    post_pass: PassFn | None = None  # TorchAir's post_grad_custom_post_pass (a raw callable)
    hooks: Any = None  # airctl.passes.PassHooks from a YAML file; built from the target's passes_file when not given
    instruments: Sequence[Instrument] = ()
    stop_after_passes: bool = False  # --plan: stop before conversion and execution
    verify: bool = True  # verify-each: run the static verifier after every pass
    report: bool = True  # write report.html into the ledger (not with capture minimal)
    # after the checked run: called with a function that runs the compiled model once more, and the
    # run's RunExecution (``airctl profile`` runs its warmup and profiled steps here, recording them)
    after_run: Callable[[Callable[[], Any], RunExecution], None] | None = None
    command_line: Sequence[str] | None = None  # the airctl command that asked for this run (recorded)
    threads_per_stream: int | None = None  # multi-stream executor (sim): intra-op threads per stream
    stream_timeout_s: float = DEFAULT_TIMEOUT_S  # multi-stream executor (sim): longest wait before it stops the run
    bisect: dict[str, Any] | None = None  # airctl bisect: this step, for index.json `bisect`
    keep_dynamo_graphs: bool = False  # keep each Dynamo graph and its real example inputs (airctl repro)
    rank: RankRun | None = None  # a rank of a multi-rank run (pipeline/ranks/worker.py)
    reference: bool = True  # run the model eagerly first, for the check against eager (airctl coverage: no)
    # airctl coverage: an eval-mode model without a training step is traced as inference (torch.no_grad),
    # so AOT builds the forward graph an inference compile converts, not a joint forward/backward graph
    trace_inference: bool = False
    # a loop command (passes apply, compile): start from a kept pre-pass graph of --out when the key
    # matches, else compile in full and keep one (pipeline/incremental, docs/incremental.md)
    incremental: bool = False
    kept_in: Path | None = None  # incremental: whose runs' kept graphs to start from (None: out_dir's; passes fix)

    @classmethod
    def of(cls, model_path: Path | str, **settings: Any) -> CompileRequest:
        """A request from loose keywords, for one-off compiles (tests, benchmarks): the target's fields
        go to the target, the others to the request."""
        names = {f.name for f in fields(Target)}
        target = Target(Path(model_path), **{k: v for k, v in settings.items() if k in names})
        return cls(target, **{k: v for k, v in settings.items() if k not in names})


@dataclass
class CompileResult:
    ledger_dir: Path
    index: RunIndex
    backend: Any  # airctl.backends.Backend, None when the run ended before one was chosen
    execution: Comparison | None
    error: AirctlError | None = None
    session: Any = field(default=None, repr=False)  # the CaptureSession
    races: list[dict[str, Any]] = field(default_factory=list)  # multi-stream executor (sim), execution.races
    hooks: Any = field(default=None, repr=False)  # the YAML passes' PassHooks (runs, warnings, errors)
    # keep_dynamo_graphs (airctl repro): {"inputs", "state" (the model's state_dict), "dynamo": [(gm, inputs)]}
    kept: dict[str, Any] | None = field(default=None, repr=False)

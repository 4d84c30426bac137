"""``airctl coverage MODEL.py``: which ops of a model TorchAir cannot convert to GE, without converting.

The same question a failed max-autotune compile answers (:mod:`.compile.converter_errors`), asked
up front and in seconds: the model is traced (Dynamo, AOT, TorchAir's FX passes) as a max-autotune
compile would, and at TorchAir's last hook before GE conversion (``post_grad_custom_post_pass``) the
graph is checked against TorchAir's converter table (:mod:`airctl.verify.converter_coverage`). The
first graph with ops TorchAir cannot convert stops the compile there (no GE graph is built for it,
nothing more runs); a graph that converts goes on as in a compile, so that the graphs after it are
reached too (those after a graph break, a training step's backward). The run leaves a minimal ledger.

Two things a compile does are left out, because the answer does not need them and they cost more
than the answer: the eager reference run, and AOT's joint forward/backward graph for a model that
only infers (eval mode, no training step: traced under ``torch.no_grad``, the forward graph an
inference compile converts). A training step keeps its grad mode, so its backward is checked.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError, ExecutionMismatch, UnconvertibleOps
from airctl.pipeline.target import EveryMode


@dataclass
class Coverage:
    """What :func:`coverage` found: the unconvertible ops (JSON records) and the ledger it left."""

    ops: list[dict[str, Any]] = field(default_factory=list)
    graphs: int = 0
    check_seconds: float = 0.0  # in the converter checks themselves (the rest is tracing, as any compile)
    # from the model loaded to the answer: tracing (Dynamo, AOT, TorchAir's FX passes) and the checks;
    # what comes before it (TorchAir's start-up, the script's imports and model) any compile pays too
    answer_seconds: float | None = None
    ledger: str | None = None
    error: AirctlError | None = None  # the UnconvertibleOps error (exit 3), or a failure before the check

    def to_json(self) -> dict[str, Any]:
        return {"convertible": not self.ops and self.error is None, "graphs_checked": self.graphs,
                "check_seconds": round(self.check_seconds, 3),
                "answer_seconds": None if self.answer_seconds is None else round(self.answer_seconds, 3),
                "unconvertible": self.ops, "ledger": self.ledger,
                "error": self.error.to_json() if self.error is not None else None}


def coverage(model_path: Path, *, entry: str | None = None, out_dir: Path = Path("airctl-runs"),
             every: EveryMode | None = None, command_line: list[str] | None = None) -> Coverage:
    """Trace ``model_path`` for max-autotune and report every op TorchAir cannot convert."""
    from airctl.io.fx_reader import read_fx
    from airctl.modes import Capture, Mode
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.pipeline.compile.converter_errors import unconvertible_error
    from airctl.verify.converter_coverage import unconvertible_ops

    result = Coverage()

    def check(gm: Any, example_inputs: Any, config: Any) -> None:
        result.graphs += 1
        t0 = time.perf_counter()
        found = unconvertible_ops(read_fx(gm, name=f"graph {result.graphs}"))
        result.check_seconds += time.perf_counter() - t0
        if found:
            raise unconvertible_error(found, "TorchAir would not convert this model to GE")

    target = (every or EveryMode()).target(model_path, mode=Mode.MAX_AUTOTUNE, entry=entry, capture=Capture.MINIMAL)
    request = CompileRequest(target, out_dir=out_dir, post_pass=check, report=False, command="coverage",
                             command_line=command_line, reference=False, trace_inference=True)
    compiled = compile_model(request)
    result.ledger = str(compiled.ledger_dir)
    t = compiled.index.timings
    if {"total_seconds", "backend_seconds", "load_seconds"} <= t.keys():
        result.answer_seconds = t["total_seconds"] - t["backend_seconds"] - t["load_seconds"]
    error = compiled.error
    if isinstance(error, UnconvertibleOps):
        result.ops, result.error = error.ops, error
    elif error is not None and not isinstance(error, ExecutionMismatch):
        result.error = error  # the script, Dynamo, or a conversion failure the table does not predict
    return result

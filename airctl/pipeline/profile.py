"""``airctl profile MODEL.py``: compile, then run the model several times on the recording executor.

The compile is airctl's normal one (:func:`airctl.pipeline.compile.compile_model`, ledger
``command = "profile"``, every stage captured, eager check on the first run). After that first
run, still inside the compile's capture session, the compiled model runs ``warmup`` more times
unrecorded and ``steps`` times recorded: every compiled graph's executor run leaves timed ops
per stream, sync edges and races in one :class:`~airctl.execute.timeline.Timeline` per graph
(events carry ``OpEvent.step``; times are seconds from the start of their step). Each timeline
is written to ``<ledger>/profile/timeline_<graph>.json``; the summaries, Chrome trace and
picture are :mod:`airctl.profile`'s business.

Timed execution exists where the executor runs: the ``sim`` backend. On an NPU the device runs
the graphs, and ``airctl profile analyze`` reads torch_npu's profiler output instead.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.execute.timeline import Race, Timeline

TIMELINE_DIR = "profile"


@dataclass
class ProfileRequest:
    model_path: Path
    mode: str = "max-autotune"
    passes_file: Path | None = None  # YAML pass file -> airctl.passes.build_hooks(path) -> pre_pass/post_pass
    steps: int = 5
    warmup: int = 1
    out_dir: Path = Path("airctl-runs")
    backend: str = "auto"
    entry: str | None = None
    threads_per_stream: int = 1
    timeout_s: float = 60.0


@dataclass
class ProfileRun:
    ledger_dir: Path
    timelines: list[Timeline]  # one per compiled graph; events of all profiled steps, step_seconds filled
    races: list[Race]
    matches_eager: bool | None
    max_abs_error: float | None
    step_seconds: list[float]  # wall time of each whole-model profiled step
    error: AirctlError | None = None
    warnings: list[str] = field(default_factory=list)


def profile_model(req: ProfileRequest, progress: Callable[[str], None] | None = None) -> ProfileRun:
    from airctl.execute.recorder import Recorder
    from airctl.pipeline.compile import CompileRequest, compile_model

    say = progress or (lambda _msg: None)
    if req.steps < 1 or req.warmup < 0:
        return _failed(req, AirctlError(f"invalid --steps {req.steps} / --warmup {req.warmup}",
                                        hint="profile at least one step; warmup may be 0"))
    pre = post = None
    if req.passes_file is not None:
        try:
            from airctl.passes import build_hooks

            hooks = build_hooks(Path(req.passes_file))
        except AirctlError as e:
            return _failed(req, e)
        pre, post = hooks.pre_pass, hooks.post_pass

    rec = Recorder(keep_events=False)
    step_seconds: list[float] = []

    def profiled_steps(run_once: Callable[[], Any], execution: Any) -> None:
        with execution.recording(rec):
            for k in range(req.warmup):
                say(f"warmup {k + 1}/{req.warmup}")
                run_once()
            rec.keep_events = True
            try:
                for k in range(req.steps):
                    say(f"step {k + 1}/{req.steps}")
                    rec.start_step(k)
                    t0 = time.perf_counter()
                    run_once()
                    step_seconds.append(time.perf_counter() - t0)
            finally:
                rec.keep_events = False

    result = compile_model(CompileRequest(
        Path(req.model_path), mode=req.mode, out_dir=Path(req.out_dir), backend=req.backend, entry=req.entry,
        pre_pass=pre, post_pass=post, command="profile",
        passes_file=str(req.passes_file) if req.passes_file is not None else None,
        threads_per_stream=req.threads_per_stream, stream_timeout_s=req.timeout_s, after_run=profiled_steps,
    ), progress=say)
    ids = result.session.graph_ids_by_name() if result.session is not None else {}
    timelines = list(rec.timelines.values())
    for tl in timelines:
        tl.meta.setdefault("graph_id", ids.get(tl.graph))
        tl.meta.setdefault("threads_per_stream", req.threads_per_stream)
        tl.steps = len(step_seconds)
        while len(tl.step_seconds) < len(step_seconds):
            tl.step_seconds.append(0.0)
    folder = Path(result.ledger_dir) / TIMELINE_DIR
    if timelines:
        folder.mkdir(parents=True, exist_ok=True)
        for tl in timelines:
            (folder / f"timeline_{_safe(tl.graph)}.json").write_text(json.dumps(tl.to_json(), default=str),
                                                                     encoding="utf-8")
    warnings = []
    if not timelines and result.error is None:
        backend = result.backend.name if result.backend is not None else "?"
        warnings.append(f"no timeline was recorded: the {backend} backend does not run graphs on airctl's executor "
                        "(timed multi-stream runs exist under sim; on an NPU use `airctl profile analyze`)")
    execution = result.execution
    return ProfileRun(
        ledger_dir=Path(result.ledger_dir), timelines=timelines, races=[r for _, r in rec.races] or
        _races_from_rows(result.races), matches_eager=execution.matches_eager if execution else None,
        max_abs_error=execution.max_abs_error if execution else None, step_seconds=step_seconds,
        error=result.error, warnings=warnings)


def _failed(req: ProfileRequest, error: AirctlError) -> ProfileRun:
    return ProfileRun(Path(req.out_dir), [], [], None, None, [], error)


def _races_from_rows(rows: list[dict[str, Any]]) -> list[Race]:
    keys = ("reader", "producer", "reader_stream", "producer_stream", "reader_source", "producer_source", "message")
    return [Race(**{k: r.get(k) for k in keys}) for r in rows]


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "graph"

"""``airctl profile [SOURCE] --times TIMES``: what the run's stream plan does on the NPU, predicted.

No NPU and no model execution: the graph that runs is read from the ledger (max-autotune: the
last GE graph; reduce-overhead and npugraph_ex: the last FX stage, TorchAir's closure events
included), each task gets a device time from TIMES, and :mod:`airctl.predict.replay` replays the
plan. The result is an ordinary profile (summary, trace, picture, report.html's Profile section)
whose ``meta`` says ``predicted`` and where the times came from, plus the ``predicted`` record.

SOURCE is the current run (nothing), a run id or ledger, a model script (compiled first, as
``compile`` would), or a torch_npu profiler folder: then the plan is the one the NPU measured, replayed
with its own times — the check that the model reproduces what was measured.

``--compare`` predicts the same graph twice: as planned, and on a single stream (every user stream
folded into the default one; GE's own stream for collectives kept, as GE does that by itself).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from airctl.devices import Device, device
from airctl.errors import AirctlError
from airctl.execute.timeline import DEFAULT_STREAM, Timeline
from airctl.graph.model import Graph
from airctl.io.source import is_profiler_folder
from airctl.ledger.defaults import Request
from airctl.ledger.reader import Ledger
from airctl.modes import Mode
from airctl.pipeline.predict_times import ESTIMATE as ESTIMATE  # re-exported: suggest reads TIMES the same way
from airctl.pipeline.predict_times import Timing, load_timing, measured_memory
from airctl.pipeline.predict_times import check_names as check_names
from airctl.pipeline.predict_times import load_times as load_times
from airctl.pipeline.profile_files import write_profile
from airctl.predict.plan import COMM_STREAM, ReplayPlan, plan_from_graph, plan_from_timeline
from airctl.predict.prediction import Prediction, ignored_rows, predicted_record
from airctl.predict.step import Conditions, describe, price, race_free
from airctl.predict.times import TimesTable
from airctl.profile.compare import ratio
from airctl.profile.summary import ProfileSummary, summarize
from airctl.profile.write import PROFILE_DIR, prediction_folder, write_json


@dataclass
class PredictRequest:
    times: str  # a CSV, a profiler folder, or "estimate"
    source: Path | None = None  # a ledger folder or profiler folder; None: ``run`` / the current run
    run: str | None = None
    out_dir: Path = Path("airctl-runs")
    device: str | None = None  # --device: the core total for sharing, the estimate's peaks
    launch_us: float | None = None  # --launch-us: overrides the mode's constant
    compare: bool = False
    top: int = 10
    png: bool = False
    write: bool = True  # file the prediction into the run's ledger (False: a question another command asks)
    model: Any = None  # a model script's Target: compiled first (as ``compile`` would), its run predicted
    command_line: list[str] | None = None  # recorded in that compile's ledger


@dataclass
class PredictOutcome:
    summary: ProfileSummary
    single: ProfileSummary | None = None  # with --compare: the same graph on one stream
    notes: list[str] = field(default_factory=list)
    memory: dict[str, Any] | None = None  # with --compare: memory_delta(single stream, plan)

    def to_json(self) -> dict[str, Any]:
        if self.single is None:
            return self.summary.to_json()
        a, b = self.single.predicted or {}, self.summary.predicted or {}
        valid = b.get("valid_step_us", b.get("step_us"))  # a racy plan's gain is its race-free twin's
        return {"predicted": True, "without": self.single.to_json(), "with": self.summary.to_json(),
                "step_time_ratio": ratio(valid, a.get("step_us")),
                "saved_us": (a.get("step_us") or 0.0) - (valid or 0.0),
                "racy": bool(b.get("racy")), "memory": self.memory,
                "overlap_gained_us": (b.get("overlap_us") or 0.0) - (a.get("overlap_us") or 0.0),
                "mechanism": mechanism(a, b)}


def predict(req: PredictRequest, progress: Callable[[str], None] | None = None) -> PredictOutcome:
    """Predict the plan of ``req.source`` (or the current run) with ``req.times``; files into its ledger."""
    from airctl.ledger.runs import resolve_run

    say = progress or (lambda _msg: None)
    dev = device(req.device) if req.device else None
    if req.model is not None:
        req = replace(req, source=_compiled(req, say), model=None)
    if req.source is not None and is_profiler_folder(req.source):
        return _predict_measured(req, dev, say)
    ledger_dir = resolve_run(req.out_dir, req.source if req.source is not None else req.run)
    ledger = Ledger.open(ledger_dir)
    refuse_failed(ledger)
    plans, fx_graphs = ledger_plans(ledger)
    say("reading the times…")
    timing = load_timing(req.times, ledger_dir, fx_graphs, dev)
    table, notes = timing.table, timing.notes
    check_names(table, plans)
    cond = timing.conditions(dev, req.launch_us, fx_graphs)
    summary = _summarize(plans, table, req, cond, notes, str(ledger_dir), measured=timing.measured_memory)
    single = None
    memory = None
    if req.compare:
        from airctl.predict.memory import memory_delta

        single = _summarize([single_stream(p) for p in plans], table, req, cond, notes, str(ledger_dir),
                            check_races=False)
        memory = memory_delta(single.meta.pop("_memory"), summary.meta["_memory"])
    summary.meta.pop("_memory", None)
    timelines = summary.meta.pop("_timelines")
    if single is not None:
        single.meta.pop("_timelines", None)
    if req.write:
        folder = prediction_folder(ledger_dir)
        model = ledger.index.model if isinstance(ledger.index.model, dict) else {}
        title = f"{Path(str(model.get('path') or ledger_dir.name)).name} (predicted, {table.source})"
        write_profile(folder, timelines, summary, title=title, png=req.png)
        if single is not None:
            write_json(folder / "compare.json", PredictOutcome(summary, single, memory=memory).to_json())
    return PredictOutcome(summary, single, notes, memory)


def _compiled(req: PredictRequest, say: Callable[[str], None]) -> Path:
    """The model script compiled (its passes applied) into ``req.out_dir``: the run to predict."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    say("compiling (the prediction reads its graphs)…")
    result = compile_model(CompileRequest(req.model, out_dir=req.out_dir, command="profile",
                                          command_line=req.command_line), progress=say)
    if result.error is not None:
        raise result.error
    return Path(result.ledger_dir)


def refuse_failed(ledger: Ledger) -> None:
    """A run that did not end ``ok`` has no plan to predict: its graphs are what was captured before it
    stopped (a failed apply's passes never ran on the graph that would run)."""
    status = ledger.index.status
    if status in (None, "ok", "planned", "mismatch"):  # a plan-only apply, or outputs off eager: the plan is whole
        return
    why = ledger.index.error or status
    raise AirctlError(f"run {ledger.root.name} ended {status}: {why}", file=str(ledger.index_path),
                      hint="fix what failed and run it again (`airctl show` says what failed), or predict "
                           "another run with --run ID")


def ledger_plans(ledger: Ledger) -> tuple[list[ReplayPlan], list[Graph]]:
    """The plan of each graph of the run, and the FX graphs (the estimate reads their shapes)."""
    mode = ledger.index.run_mode or Mode.MAX_AUTOTUNE
    plans: list[ReplayPlan] = []
    fx_graphs: list[Graph] = []
    for gid in ledger.graph_ids():
        entry = ledger.index.graph(gid)
        graph_mode = (entry.graph_mode if entry is not None else None) or mode
        stages = ledger.stages(gid)
        fx = [s for s in stages if s.dialect == "fx"]
        ge = [s for s in stages if s.dialect == "ge"]
        if fx:
            fx_graphs.append(ledger.load(fx[-1]))
        chosen = ge[-1] if graph_mode.meaning.replays == "ge" and ge else ledger.default_stage(Request.PROFILE, gid)
        if chosen is None:
            continue
        graph = fx_graphs[-1] if fx and chosen is fx[-1] else ledger.load(chosen)
        graph.name = gid
        plan = plan_from_graph(graph, graph_mode, stage=chosen.name)
        if graph.dialect == "ge" and fx:
            _provenance_from_fx(plan, fx_graphs[-1])
        plans.append(plan)
    if not plans:
        raise AirctlError("the run holds no graph to predict", file=str(ledger.index_path),
                          hint="the run failed before a graph was captured; pick another with --run ID")
    return plans, fx_graphs


def _provenance_from_fx(plan: ReplayPlan, fx: Graph) -> None:
    """A GE op's source line and module are its FX node's (GE dumps carry neither); its FX nodes' ops let
    an ``op,us`` table of ATen targets time it (``meta["fx_ops"]``)."""
    for t in plan.tasks:
        nodes = [n for alias in t.aliases if (n := fx.get(alias)) is not None]
        if nodes:
            t.source = t.source or nodes[0].source
            t.module = t.module or nodes[0].module
            t.meta["fx_ops"] = tuple(dict.fromkeys(n.op for n in nodes))


def _summarize(plans: list[ReplayPlan], table: TimesTable, req: PredictRequest, cond: Conditions,
               notes: list[str], ledger: str | None, check_races: bool = True,
               measured: dict[str, Any] | None = None) -> ProfileSummary:
    """Price every graph's plan (:func:`airctl.predict.step.price`, the one step), check it for races in
    its mode, and make the profile summary of the replay."""
    from airctl.predict.memory import predict_memory

    timelines: list[Timeline] = []
    unmatched: list[str] = []
    memories = []
    launch = span_valid = 0.0
    races: list[dict[str, Any]] = []
    bw = cores = 0.0
    kernels = sum(len(p.kernels()) for p in plans)
    for plan in plans:
        resolved = table.resolve(plan)
        unmatched += [f"{plan.graph}/{n}" for n in resolved.unmatched]
        plan_cond = with_stream_limits(cond, plan)
        priced = price(plan, resolved.durations_us, resolved.cores, plan_cond)
        timelines.append(priced.replayed.timeline)
        memories.append(predict_memory(plan, priced.replayed))
        launch += priced.launch_us
        bw, cores = bw + priced.replayed.bandwidth_bound_us, cores + priced.replayed.core_bound_us
        found = plan_races(plan) if check_races else []
        races += found
        twin = race_free(plan, plan.graph_model) if found else plan
        span_valid += price(twin, resolved.durations_us, resolved.cores, plan_cond).replayed.span_us if found \
            else priced.replayed.span_us
    ignored = ignored_rows(table, plans)
    pred = Prediction(table.source, table.label, cond.device.name if cond.device else None, launch, cond.gap_us,
                      cond.latency_us, unmatched, [f"{p.graph}/{p.stage}" for p in plans], races=races,
                      valid_span_us=span_valid if races else None, ignored_rows=ignored[0], ignored_count=ignored[1],
                      bandwidth_bound_us=bw, core_bound_us=cores, conditions=describe(cond),
                      memory=memory_record(memories, measured))
    if kernels and 2 * len(unmatched) > kernels:
        notes = [*notes, f"{len(unmatched)} of {kernels} kernels have no time in {table.source}: times of "
                         "another model or run? (they take no time in the replay)"]
    summary = predicted_summary(timelines, pred, req.top)
    summary.meta.update({"ledger": ledger, "predicted": True, "times_from": table.source, "simulated": False,
                         "mode": str(plans[0].mode), "notes": list(notes) + [p for plan in plans for p in plan.notes],
                         "_timelines": timelines, "_memory": max(memories, key=lambda m: m.peak_bytes)})
    return summary


def with_stream_limits(cond: Conditions, plan: ReplayPlan) -> Conditions:
    """``cond`` with the plan's per-stream core limits (npugraph_ex's ``limit_core_num``), read by
    :func:`airctl.verify.core_limits.stream_core_limits` from the graph the plan replays."""
    from airctl.verify.core_limits import stream_core_limits

    if plan.graph_model is None or plan.graph_model.dialect != "fx":
        return cond
    limits = stream_core_limits(plan.graph_model, plan.mode)
    if not limits:
        return cond
    return replace(cond, stream_limits={(s or DEFAULT_STREAM): {"cube": float(aic), "vector": float(aiv)}
                                        for s, (aic, aiv) in limits.items()})


def memory_record(memories: list[Any], measured: dict[str, Any] | None) -> dict[str, Any] | None:
    """``predicted.memory``: the graph with the highest predicted peak (graphs run one after the other),
    every graph's peak, and what a profiler folder measured beside it."""
    if not memories:
        return {"measured": measured} if measured else None
    top = max(memories, key=lambda m: m.peak_bytes)
    rec = top.to_json()
    rec["by_graph"] = {m.graph: m.peak_bytes for m in memories}
    if measured:
        rec["measured"] = measured
        rec["measured_peak_bytes"] = measured.get("peak_allocated_bytes")
    return rec


def plan_races(plan: ReplayPlan) -> list[dict[str, Any]]:
    """The verifier's errors for the graph ``plan`` replays, in the plan's mode: a plan with one is not
    a valid plan, whatever it is predicted to take."""
    from airctl.verify.verifier import verify

    if plan.graph_model is None:
        return []
    out = []
    for f in verify(plan.graph_model, plan.mode):
        if f.severity == "error":
            data = f.to_json()
            data["graph"] = plan.graph
            out.append(data)
    return out


def _predict_measured(req: PredictRequest, dev: Device | None, say: Callable[[str], None]) -> PredictOutcome:
    """Replay the plan a profiler folder measured, with its own times (or ``req.times``) and its own host
    launches: what the model must give back is the measured step."""
    from airctl.pipeline.profile import analysis_dir
    from airctl.predict.host import host_interval_us
    from airctl.predict.profiled import dispatch_gap_us, event_latency_us, profile_timeline
    from airctl.profile import events as ev

    say("reading the profile…")
    timeline, notes = profile_timeline(Path(req.source or "."), None)
    step = ev.representative_step(timeline)
    if step is None:
        raise AirctlError("the profile holds no task", file=str(req.source))
    plan, durations = plan_from_timeline(timeline, step)
    plan.graph = timeline.graph
    own = Path(req.times).resolve() == Path(req.source or ".").resolve() if req.times != ESTIMATE else False
    if own:  # each task's own measured time: the replay must give back what was measured
        timing = Timing(TimesTable(str(req.source), "node", label="profile"), dispatch_gap_us(timeline),
                        event_latency_us(timeline), [], host_interval_us(plan))
        cores: list[float | None] = [None] * len(durations)
        unmatched: list[str] = []
    else:
        timing = load_timing(req.times, None, [], dev)
        notes += timing.notes
        resolved = timing.table.resolve(plan)
        durations, cores, unmatched = resolved.durations_us, resolved.cores, resolved.unmatched
    cond = timing.conditions(dev, 0.0, [])
    priced = price(plan, durations, cores, cond)
    measured_us = (lambda a_b: (a_b[1] - a_b[0]) * 1e6)(ev.span(ev.step_events(timeline, step)))
    table = timing.table
    pred = Prediction(table.source, table.label, dev.name if dev else None, 0.0, cond.gap_us, cond.latency_us,
                      unmatched, [f"{timeline.graph}/step {step}"], measured_us=measured_us,
                      bandwidth_bound_us=priced.replayed.bandwidth_bound_us,
                      core_bound_us=priced.replayed.core_bound_us, conditions=describe(cond),
                      missing=missing_data(plan, timeline), memory=memory_record([], measured_memory(timeline)))
    summary = predicted_summary([priced.replayed.timeline], pred, req.top)
    summary.meta.update({"predicted": True, "times_from": table.source, "simulated": False, "folder": str(req.source),
                         "notes": notes})
    folder = analysis_dir(Path(req.out_dir), f"predict-{timeline.graph}", Path(req.source or ".").resolve())
    write_profile(folder / PROFILE_DIR, [priced.replayed.timeline], summary,
                  title=f"{timeline.graph} (predicted from its own profile)", png=req.png)
    return PredictOutcome(summary, None, notes)


def missing_data(plan: ReplayPlan, timeline: Timeline) -> list[str]:
    """What the folder lacks for the replay of its own plan to explain the measured step."""
    from airctl.predict.plan import KERNEL

    kernels = [t for t in plan.tasks if t.kind == KERNEL and not t.meta.get("comm")]
    launched = sum(1 for t in kernels if t.meta.get("release_us") is not None)
    if not kernels or launched == len(kernels):
        return []
    where = (f"the folder links no host launch to them ({timeline.meta.get('tasks_from')})" if launched else
             "no host launch times: the folder has neither trace_view.json with CANN rows and HostToDevice flows nor "
             "a .db export with CANN_API")
    return [f"{len(kernels) - launched} of {len(kernels)} compute tasks have no launch time ({where}); the replay "
            "starts them as soon as their stream is free, so host-bound idle time is not explained"]


def predicted_summary(timelines: list[Timeline], pred: Prediction, top: int) -> ProfileSummary:
    """The profile summary of a replay, its step time the predicted one (launch included)."""
    summary = summarize(timelines, races=[], top=top)
    summary.predicted = predicted_record(summary, pred)
    summary.step_s = summary.predicted["step_us"] * 1e-6
    summary.step_seconds = [summary.step_s]
    return summary


def single_stream(plan: ReplayPlan) -> ReplayPlan:
    """The same tasks in the same program order on the default stream (GE's collective stream kept)."""
    tasks = []
    for t in plan.tasks:
        stream = COMM_STREAM if t.stream == COMM_STREAM else DEFAULT_STREAM
        tasks.append(replace(t, stream=stream, after=[]))
    for t, orig in zip(tasks, plan.tasks, strict=True):
        t.after = [(j, k) for j, k in orig.after if tasks[j].stream != t.stream]
    return replace(plan, tasks=tasks, notes=[])


def mechanism(without: dict[str, Any], with_: dict[str, Any]) -> str:
    """In words: what the plan changes, from the two predicted records (a racy plan: its race-free twin's)."""
    saved = (without.get("step_us") or 0.0) - (with_.get("valid_step_us", with_.get("step_us")) or 0.0)
    if with_.get("racy"):
        return (f"racy: not a valid plan; race-free it {'saves' if saved > 0 else 'costs'} {abs(saved):.1f} µs a step "
                "(`airctl passes fix` writes the waits)")
    gained = (with_.get("overlap_us") or 0.0) - (without.get("overlap_us") or 0.0)
    before = without.get("streams") or {}
    streams = [s for s, busy in (with_.get("streams") or {}).items() if busy and not before.get(s)]
    if abs(saved) < 0.5:
        return "no predicted change: the plan overlaps nothing on the critical path"
    where = f" on {', '.join(streams)}" if streams else ""
    verb = "saves" if saved > 0 else "costs"
    path = with_.get("critical_path_kernels") or []
    return (f"{verb} {abs(saved):.1f} µs a step: {gained:.1f} µs of overlap gained{where}; the critical path is now "
            f"{' → '.join(path[:6])}{' …' if len(path) > 6 else ''}")

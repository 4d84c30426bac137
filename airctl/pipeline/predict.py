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

from airctl.errors import AirctlError
from airctl.execute.timeline import DEFAULT_STREAM, Timeline
from airctl.graph.model import Graph
from airctl.io.source import is_profiler_folder
from airctl.ledger.defaults import Request
from airctl.ledger.reader import Ledger
from airctl.modes import MAX_AUTOTUNE
from airctl.predict.devices import Device, device
from airctl.predict.plan import COMM_STREAM, ReplayPlan, plan_from_graph, plan_from_timeline
from airctl.predict.prediction import LAUNCH_US, Prediction, predicted_record
from airctl.predict.replay import replay
from airctl.predict.times import TimesError, TimesTable, read_times_csv
from airctl.profile.summary import ProfileSummary, summarize
from airctl.profile.write import PROFILE_DIR, SUMMARY_FILE, write_json, write_profile

ESTIMATE = "estimate"


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


@dataclass
class PredictOutcome:
    summary: ProfileSummary
    single: ProfileSummary | None = None  # with --compare: the same graph on one stream
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        if self.single is None:
            return self.summary.to_json()
        a, b = self.single.predicted or {}, self.summary.predicted or {}
        return {"predicted": True, "without": self.single.to_json(), "with": self.summary.to_json(),
                "step_time_ratio": _ratio(b.get("step_us"), a.get("step_us")),
                "saved_us": (a.get("step_us") or 0.0) - (b.get("step_us") or 0.0),
                "overlap_gained_us": (b.get("overlap_us") or 0.0) - (a.get("overlap_us") or 0.0),
                "mechanism": mechanism(a, b)}


def predict(req: PredictRequest, progress: Callable[[str], None] | None = None) -> PredictOutcome:
    """Predict the plan of ``req.source`` (or the current run) with ``req.times``; files into its ledger."""
    from airctl.ledger.runs import resolve_run

    say = progress or (lambda _msg: None)
    dev = device(req.device) if req.device else None
    if req.source is not None and is_profiler_folder(req.source):
        return _predict_measured(req, dev, say)
    ledger_dir = resolve_run(req.out_dir, req.source if req.source is not None else req.run)
    ledger = Ledger.open(ledger_dir)
    plans, fx_graphs = ledger_plans(ledger)
    say("reading the times…")
    table, gap, latency, notes = load_times(req.times, ledger_dir, fx_graphs, dev)
    check_names(table, plans)
    summary = _summarize(plans, table, req, dev, gap, latency, notes, str(ledger_dir))
    single = None
    if req.compare:
        single = _summarize([single_stream(p) for p in plans], table, req, dev, gap, latency, notes, str(ledger_dir),
                            write=False)
    folder = prediction_folder(ledger_dir)
    model = ledger.index.model if isinstance(ledger.index.model, dict) else {}
    title = f"{Path(str(model.get('path') or ledger_dir.name)).name} (predicted, {table.source})"
    write_profile(folder, summary.meta.pop("_timelines"), summary, title=title, png=req.png)
    if single is not None:
        single.meta.pop("_timelines", None)
        write_json(folder / "compare.json", PredictOutcome(summary, single).to_json())
    return PredictOutcome(summary, single, notes)


def ledger_plans(ledger: Ledger) -> tuple[list[ReplayPlan], list[Graph]]:
    """The plan of each graph of the run, and the FX graphs (the estimate reads their shapes)."""
    mode = ledger.index.run_mode or MAX_AUTOTUNE
    plans: list[ReplayPlan] = []
    fx_graphs: list[Graph] = []
    for gid in ledger.graph_ids():
        entry = ledger.index.graph(gid)
        graph_mode = (entry.mode if entry is not None else None) or mode
        stages = ledger.stages(gid)
        fx = [s for s in stages if s.dialect == "fx"]
        ge = [s for s in stages if s.dialect == "ge"]
        if fx:
            fx_graphs.append(ledger.load(fx[-1]))
        chosen = ge[-1] if graph_mode == MAX_AUTOTUNE and ge else ledger.default_stage(Request.PROFILE, gid)
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
    """A GE op's source line and module are its FX node's (GE dumps carry neither)."""
    for t in plan.tasks:
        for alias in t.aliases:
            node = fx.get(alias)
            if node is not None:
                t.source = t.source or node.source
                t.module = t.module or node.module
                break


def load_times(spec: str, ledger_dir: Path | None, fx_graphs: list[Graph], dev: Device | None
               ) -> tuple[TimesTable, float, float, list[str]]:
    """The table ``spec`` names, the dispatch gap and event latency it measured (0 unless a profile),
    and notes."""
    if spec == ESTIMATE:
        from airctl.predict.estimate import estimate_table

        table, unsized = estimate_table(fx_graphs, dev or device(None))
        notes = [f"estimate: {len(unsized)} kernel(s) without recorded shapes take the fixed "
                 f"{table.default.us if table.default else 0:g} µs: {', '.join(unsized[:8])}"
                 + (" …" if len(unsized) > 8 else "")] if unsized else []
        return table, 0.0, 0.0, notes
    path = Path(spec)
    if path.is_dir():
        if not is_profiler_folder(path):
            raise TimesError("a folder, but not a torch_npu profiler folder", file=spec,
                             hint="--times takes a profiler folder (*_ascend_pt or its parent), a CSV, or `estimate`")
        from airctl.predict.profiled import dispatch_gap_us, event_latency_us, profile_table, profile_timeline

        timeline, notes = profile_timeline(path, ledger_dir)
        return profile_table(timeline, spec), dispatch_gap_us(timeline), event_latency_us(timeline), notes
    return read_times_csv(path), 0.0, 0.0, []


def check_names(table: TimesTable, plans: list[ReplayPlan]) -> None:
    """A table (or profile) none of whose rows matches a node or op of the run is another model's."""
    from airctl.predict.times import op_keys

    if table.label == "estimate" or table.default is not None or not table.names():
        return
    names = {n for p in plans for t in p.tasks for n in (t.name, *t.aliases)}
    ops = {k for p in plans for t in p.kernels() for k in op_keys(t.op)}
    if names & set(table.rows) or ops & set(table.op_rows):
        return
    what = "tasks of the profile" if table.label == "profile" else "names in the table"
    sample = ", ".join(sorted(table.names())[:3])
    raise TimesError(f"none of the {len(table.names())} {what} is a node or op of the run ({sample}, …)",
                     file=table.source, hint="times of another model or run? `airctl dump --type fx` lists the "
                                             "run's node names; an `op,us` table matches by op instead")


def _summarize(plans: list[ReplayPlan], table: TimesTable, req: PredictRequest, dev: Device | None, gap: float,
               latency: float, notes: list[str], ledger: str | None, write: bool = True) -> ProfileSummary:
    timelines: list[Timeline] = []
    unmatched: list[str] = []
    launch = 0.0
    kernels = sum(len(p.kernels()) for p in plans)
    for plan in plans:
        resolved = table.resolve(plan)
        unmatched += [f"{plan.graph}/{n}" for n in resolved.unmatched]
        done = replay(plan, resolved.durations_us, resolved.cores, dev.ai_cores if dev else None, gap, latency)
        timelines.append(done.timeline)
        launch += req.launch_us if req.launch_us is not None else LAUNCH_US.get(plan.mode, LAUNCH_US[MAX_AUTOTUNE])
    pred = Prediction(table.source, table.label, dev.name if dev else None, launch, gap, latency, unmatched,
                      [f"{p.graph}/{p.stage}" for p in plans])
    if kernels and 2 * len(unmatched) > kernels:
        notes = [*notes, f"{len(unmatched)} of {kernels} kernels have no time in {table.source}: times of "
                         "another model or run? (they take no time in the replay)"]
    summary = predicted_summary(timelines, pred, req.top)
    summary.meta.update({"ledger": ledger, "predicted": True, "times_from": table.source, "simulated": False,
                         "mode": plans[0].mode, "notes": list(notes) + [p for plan in plans for p in plan.notes],
                         "_timelines": timelines})
    return summary


def _predict_measured(req: PredictRequest, dev: Device | None, say: Callable[[str], None]) -> PredictOutcome:
    """Replay the plan a profiler folder measured, with its own times (or ``req.times``)."""
    from airctl.pipeline.profile import analysis_dir
    from airctl.predict.profiled import dispatch_gap_us, event_latency_us, profile_timeline
    from airctl.profile import events as ev

    say("reading the profile…")
    timeline, notes = profile_timeline(Path(req.source or "."), None)
    step = ev.representative_step(timeline)
    if step is None:
        raise AirctlError("the profile holds no task", file=str(req.source))
    plan, durations = plan_from_timeline(timeline, step)
    own = Path(req.times).resolve() == Path(req.source or ".").resolve() if req.times != ESTIMATE else False
    if not own:
        table, gap, latency, more = load_times(req.times, None, [], dev)
        notes += more
    else:
        table = TimesTable(str(req.source), "node", label="profile")
        gap, latency = dispatch_gap_us(timeline), event_latency_us(timeline)
    plan.graph = timeline.graph
    measured_us = (lambda a_b: (a_b[1] - a_b[0]) * 1e6)(ev.span(ev.step_events(timeline, step)))
    if own:  # each task's own measured time: the replay must give back what was measured
        done = replay(plan, durations, None, dev.ai_cores if dev else None, gap, latency)
        timelines, unmatched = [done.timeline], []
    else:
        resolved = table.resolve(plan)
        done = replay(plan, resolved.durations_us, resolved.cores, dev.ai_cores if dev else None, gap, latency)
        timelines, unmatched = [done.timeline], resolved.unmatched
    pred = Prediction(table.source, table.label, dev.name if dev else None, 0.0, gap, latency, unmatched,
                      [f"{timeline.graph}/step {step}"], measured_us=measured_us)
    summary = predicted_summary(timelines, pred, req.top)
    summary.meta.update({"predicted": True, "times_from": table.source, "simulated": False, "folder": str(req.source),
                         "notes": notes})
    folder = analysis_dir(Path(req.out_dir), f"predict-{timeline.graph}", Path(req.source or ".").resolve())
    write_profile(folder / PROFILE_DIR, timelines, summary, title=f"{timeline.graph} (predicted from its own profile)",
                  png=req.png)
    return PredictOutcome(summary, None, notes)


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


def prediction_folder(ledger_dir: Path) -> Path:
    """``<ledger>/profile``, unless it holds a measured profile: then ``<ledger>/profile/predicted``."""
    folder = Path(ledger_dir) / PROFILE_DIR
    summary = folder / SUMMARY_FILE
    if summary.is_file():
        import json

        try:
            data = json.loads(summary.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        if not (isinstance(data, dict) and (data.get("meta") or {}).get("predicted")):
            return folder / "predicted"
    return folder


def mechanism(without: dict[str, Any], with_: dict[str, Any]) -> str:
    """In words: what the plan changes, from the two predicted records."""
    saved = (without.get("step_us") or 0.0) - (with_.get("step_us") or 0.0)
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


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None

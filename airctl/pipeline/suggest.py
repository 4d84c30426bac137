"""``airctl passes suggest``: a race-free stream plan with the shortest predicted step, as a pass file.

The graph is the one the pre-stage passes see (the ``aot-*`` stage of the run's ledger, or of a
plan-only compile of MODEL: nothing is converted or executed). Device times come from TIMES as for
``airctl profile --times`` (default ``estimate``). :mod:`airctl.predict.regions` finds what can
move, :mod:`airctl.predict.suggest` searches the assignments by replaying each one's plan, and
:mod:`airctl.predict.suggest_yaml` writes the winner. The outcome carries the three predicted steps
(single stream, the run's own plan when it has one, the suggestion), the lower bound, the search
used, and every region considered with what became of it.

``--from PLAN.yaml`` compiles the model up to the passes with the user's file and searches from the
graph its passes leave (:func:`airctl.predict.candidate.fence` keeps the search away from what the
plan placed); the file written is the user's, with the suggested passes appended
(:func:`airctl.predict.suggest_yaml.merge`).

A run with several graphs is planned on the one with the longest single-stream step; the others
are named in the notes and the file's header, and left as they are: every pass carries ``graphs:
[kind]`` when no other graph is of the planned graph's AOT kind, else ``optional: true`` (so is a
model with a graph break whose later graphs the plan-only compile never reached), so that
``passes apply`` of the file does not fail on a graph it was not made for.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from airctl.devices import device
from airctl.errors import AirctlError
from airctl.execute.timeline import DEFAULT_STREAM
from airctl.graph.model import Graph
from airctl.ledger.reader import Ledger
from airctl.modes import Mode
from airctl.pipeline.predict import ESTIMATE, check_names, load_times, single_stream
from airctl.pipeline.suggest_check import (
    MARGIN_US,
    confirm,
    current_step,
    ge_competition,
    keeping_current,
    place,
)
from airctl.pipeline.suggest_outcome import SuggestOutcome, predicted_line
from airctl.pipeline.suggest_regions import beside as beside_of
from airctl.pipeline.suggest_regions import gains as gains_of
from airctl.pipeline.suggest_regions import region_row
from airctl.pipeline.target import EveryMode
from airctl.predict import candidate as cd
from airctl.predict import suggest as sg
from airctl.predict.plan import plan_from_graph
from airctl.predict.regions import Region, dag_of, find_regions
from airctl.predict.selectors import lines_by_source
from airctl.predict.suggest_yaml import merge, only_in, render

POST_HOOK = "after:post_grad_custom_post_pass"


@dataclass
class SuggestRequest:
    source: Path | None = None  # a model script, a ledger folder, or None: ``run`` / the current run
    run: str | None = None
    times: str = ESTIMATE
    streams: int = 2
    mode: Mode | None = None  # default: the run's, else max-autotune
    output: Path | None = None  # the pass file; default suggested-<model>.yaml
    out_dir: Path = Path("airctl-runs")
    every: EveryMode = field(default_factory=EveryMode)  # --backend, --seed: every compile and apply it makes
    entry: str | None = None
    device: str | None = None
    from_file: Path | None = None  # --from: the user's plan, kept, with passes added
    stage: str = "pre"  # the hook the passes run in: pre (before TorchAir's FX passes) or post
    search: str | None = None  # "exhaustive" / "heuristic": force one (tests, large graphs)
    exhaustive_max: int = sg.EXHAUSTIVE_MAX
    check: bool = True  # apply the suggestion and predict it as `profile --times --compare` does
    memory_budget: str | None = None  # --memory-budget BYTES|+PCT (airctl/pipeline/suggest_memory.py)

    def __post_init__(self) -> None:
        if self.mode is not None:
            self.mode = Mode.parse(self.mode)  # a caller's spelling ("ge", "npugraph-ex") becomes the Mode


def suggest(req: SuggestRequest, progress: Callable[[str], None] | None = None) -> SuggestOutcome:
    say = progress or (lambda _msg: None)
    if req.streams < 1:
        raise AirctlError(f"--streams must be at least 1, not {req.streams}")
    if req.stage not in ("pre", "post"):
        raise AirctlError(f"--stage is pre or post, not {req.stage!r}")
    ledger_dir, stem = _ledger(req, say)
    ledger = Ledger.open(ledger_dir)
    mode = req.mode or ledger.index.run_mode or Mode.MAX_AUTOTUNE
    graphs = _graphs(ledger, "pre")
    planned = graphs if req.stage == "pre" else _graphs(ledger, "post")
    if req.from_file is not None:  # the search starts from the graph the user's passes leave
        ledger_dir = _apply_from(req, ledger, mode, say)
        planned = _graphs(Ledger.open(ledger_dir), "final")
    say("reading the times…")
    dev = device(req.device) if req.device else None
    table, gap, latency, notes = load_times(req.times, ledger_dir, graphs, dev)
    plans = [plan_from_graph(g, mode) for g in planned]
    check_names(table, plans)
    times = []
    for plan in plans:
        resolved = table.resolve(plan)
        times.append(cd.Times(resolved.durations_us, resolved.cores, dev.ai_cores if dev else None, gap, latency))
        if resolved.unmatched:
            notes.append(f"{plan.graph}: {len(resolved.unmatched)} kernel(s) without a time count as 0 µs: "
                         + ", ".join(resolved.unmatched[:6]))
    singles = [cd.step_us(single_stream(p), t) for p, t in zip(plans, times, strict=True)]
    k = max(range(len(plans)), key=lambda i: singles[i])
    # a plan-only compile stops after the first graph's passes: the graphs after a graph break are never made
    breaks = sum(1 for e in ledger.index.events or [] if e.kind == "graph_break")
    only, note = only_in(plans[k].graph, [p.graph for i, p in enumerate(plans) if i != k], breaks)
    notes += [note] if note else []
    graph, base, tm = planned[k], plans[k], times[k]
    own = [s for s in base.streams() if s != DEFAULT_STREAM]  # the streams of the --from plan
    streams = req.streams - len(own)
    if req.from_file is not None and streams < 2:
        notes.append(f"--streams {req.streams}: the plan of --from already uses {len(own) + 1} stream(s), "
                     "no stream is left to add")
    say("searching…")
    dag = dag_of(graph, base)
    regions = find_regions(dag, tm.durations_us)
    lines_by_source(regions, dag.infos)
    cd.fence(base, dag, regions)
    found = sg.search(base, dag, regions, tm, max(streams, 1), req.exhaustive_max, req.search, req.streams,
                      progress=say)
    costs: dict[int, int] = {}
    memory = None
    if req.memory_budget is not None:
        from airctl.pipeline import suggest_memory as sm

        say("fitting the memory budget…")
        found.best, memory = sm.fit(base, dag, regions, tm, found.best, sm.parse_budget(req.memory_budget))
        costs = sm.region_costs(base, dag, regions, tm, found.best)
    out = SuggestOutcome(ledger_dir, graph.name, mode, table.source, singles[k], found.best.step_us,
                         found.lower_bound_us, found.method, found.evaluated, found.candidates, req.streams,
                         notes=notes, from_file=req.from_file, stage=req.stage)
    out.memory = memory
    out.current_us = found.single_us + out.launch_us if req.from_file is not None else \
        current_step(ledger_dir, req.times, req.out_dir, req.device)
    out.ge_modes = ge_competition(base, graph, mode, tm.durations_us, tm.cores, tm.gap_us, tm.latency_us, dev)
    alike = [m for m in out.ge_modes if m["streams"] <= req.streams]  # GE with no more streams than asked for
    if alike and alike[0]["step_us"] < found.best.step_us + out.launch_us - MARGIN_US:
        out.recommend = alike[0]["option"]
    model = ledger.index.model if isinstance(ledger.index.model, dict) else {}
    out.model = str(model["path"]) if model.get("path") else None
    names = cd.stream_names(base, max(streams, 1))
    gains = gains_of(base, dag, regions, tm, found)
    beside = beside_of(found.best, tm, regions, names)
    out.regions = [region_row(r, i, found.best.assign, gains, beside, names) for i, r in enumerate(regions)]
    if any(found.best.assign) and out.recommend is None:
        out.passes_file = req.output or Path(f"suggested-{stem}.yaml")
        header = _header(out, stem, mode) + [line for n in notes if n.startswith("planned graph ")
                                             for line in textwrap.wrap(n, 100)]
        comments = {i: f"{regions[i].key} ({len(regions[i].spans)} span(s)) beside {beside.get(i) or 'nothing'}; "
                       f"predicted to save {gains[i]:.1f} µs a step" + (f", +{costs[i]} bytes of peak memory"
                                                                       if i in costs else "")
                    for i, s in enumerate(found.best.assign) if s}
        if req.from_file is None:
            out.text = render(regions, found.best.assign, found.best.syncs, comments, header, names, stage=req.stage,
                              only=only)
        else:
            out.text = _merged(req.from_file, regions, found, comments, header, names, req.stage, only)
        _write_checked(out, req, mode, say)
    return out


def _write_checked(out: SuggestOutcome, req: SuggestRequest, mode: Mode, say: Callable[[str], None]) -> None:
    """Write the file, after applying it and predicting it as `profile --times --compare` does (``check``);
    nothing when the run's own plan is no slower."""
    assert out.passes_file is not None and out.text is not None
    final = out.passes_file
    if not req.check or out.model is None:
        final.write_text(out.text, encoding="utf-8")
        return
    Path(req.out_dir).mkdir(parents=True, exist_ok=True)
    scratch = Path(req.out_dir) / f".suggested-{os.getpid()}.yaml"
    scratch.write_text(out.text, encoding="utf-8")
    try:
        searched = predicted_line(out)
        out.confirmed = confirm(scratch, Path(out.model), mode, req.times, out_dir=req.out_dir, every=req.every,
                                entry=req.entry, device=req.device, say=say)
        beaten = out.from_file is None and out.current_us is not None  # --from's plan is the search's own start
        if beaten and out.confirmed.suggested_us >= out.current_us - MARGIN_US:
            out.beaten_by_current, out.passes_file, out.text = True, None, None
            return
        out.text = out.text.replace(searched, predicted_line(out), 1)  # the header says what the terminal says
        scratch.write_text(out.text, encoding="utf-8")
        place(scratch, final, out.confirmed.ledger)
    finally:
        scratch.unlink(missing_ok=True)


def _apply_from(req: SuggestRequest, ledger: Ledger, mode: Mode, say: Callable[[str], None]) -> Path:
    """A plan-only run of the model with the user's pass file: its ledger."""
    from airctl.pipeline.apply import apply_passes

    model = ledger.index.model if isinstance(ledger.index.model, dict) else {}
    path = model.get("path")
    if not path:
        raise AirctlError("--from needs the model: the run does not name its script", file=str(ledger.index_path),
                          hint="give MODEL.py")
    say(f"applying {req.from_file}…")
    target = req.every.target(path, mode=mode, entry=req.entry or model.get("entry"),
                              passes_file=Path(str(req.from_file)))
    with keeping_current(req.out_dir):  # a step of the search, not a run the user made
        result = apply_passes(target, out=req.out_dir, plan=True, with_diff=False, incremental=True)
    if result.error is not None:
        raise result.error
    assert result.ledger_dir is not None
    return Path(result.ledger_dir)


def _merged(user_file: Path, regions: list[Region], found: sg.SearchResult, comments: dict[int, str],
            header: list[str], names: list[str], stage: str, only: list[str]) -> str:
    """The user's file with the suggested passes added (as data when its text cannot take them)."""
    import yaml

    from airctl.passes.spec import parse_text, pass_text

    text = pass_text(user_file)
    taken = {p.name for p in parse_text(text, user_file).passes}
    added = render(regions, found.best.assign, found.best.syncs, comments, header, names, taken=taken, stage=stage,
                   only=only)
    merged = merge(text, added, ["added by airctl passes suggest --from:", *header])
    if merged is not None:
        return merged
    data = yaml.safe_load(text)
    data["passes"] = list(data.get("passes") or []) + list(yaml.safe_load("passes:\n" + added)["passes"] or [])
    return "".join(f"# {h}\n" for h in header) + yaml.safe_dump(data, sort_keys=False)


def _ledger(req: SuggestRequest, say: Callable[[str], None]) -> tuple[Path, str]:
    from airctl.pipeline.source import MODELS, Form, resolve_source

    source = resolve_source(req.source, req.run, out_dir=req.out_dir, accepts=MODELS)
    src = source.path
    if source.form is Form.MODEL:
        from airctl.pipeline.compile.compiler import CompileRequest, compile_model

        say("compiling up to the passes…")
        target = req.every.target(src, mode=req.mode or Mode.MAX_AUTOTUNE, entry=req.entry)
        with keeping_current(req.out_dir):  # the single-stream graph it plans on is not the user's next run
            result = compile_model(CompileRequest(target, out_dir=req.out_dir, stop_after_passes=True,
                                                  command="passes suggest", incremental=True))
        if result.error is not None:
            raise result.error
        return Path(result.ledger_dir), src.stem
    ledger_dir = src
    model = Ledger.open(ledger_dir).index.model
    path = model.get("path") if isinstance(model, dict) else None
    return ledger_dir, Path(str(path)).stem if path else Path(ledger_dir).name


def _graphs(ledger: Ledger, which: str) -> list[Graph]:
    """Per graph, the FX graph the ``pre`` hook receives (``aot-*``), the one the ``post`` hook
    receives (after TorchAir's own FX passes), or the one the YAML passes leave (``final``)."""
    out = []
    for gid in ledger.graph_ids():
        fx = [s for s in ledger.stages(gid) if s.dialect == "fx"]
        if not fx:
            continue
        pre = next((s for s in fx if s.name.startswith("aot-")), fx[0])
        mine = [s for s in fx if not s.name.startswith(("yaml:", "failed:"))]
        post_at = next((i for i, s in enumerate(mine) if s.name == POST_HOOK), len(mine))
        post = mine[post_at - 1] if post_at > 0 else pre
        yaml = [s for s in fx if s.name.startswith("yaml:")]
        chosen = {"pre": pre, "post": post, "final": yaml[-1] if yaml else (post if which == "post" else pre)}
        g = ledger.load(chosen["final" if which == "final" else which])
        g.name = gid
        out.append(g)
    if not out:
        raise AirctlError("the run holds no FX graph to plan", file=str(ledger.index_path),
                          hint="the run failed before AOT produced a graph; pick another with --run ID")
    return out


def _header(out: SuggestOutcome, stem: str, mode: Mode) -> list[str]:
    lines = [f"Suggested stream plan for {stem} (graph {out.graph}, {mode}), by `airctl passes suggest`.",
             predicted_line(out),
             "Every cross-stream data edge has a record/wait pair: race-free in every mode (the stage between",
             "a scope pass and its wait pass races until the wait runs: `show -v` lists it as fixed by that pass).",
             f"  airctl passes apply {out.passes_file.name if out.passes_file else 'THIS.yaml'} --model {stem}.py "
             f"--mode {mode}"]
    if out.current_us is not None:
        lines.insert(2, f"The existing plan: {out.current_us:.1f} µs.")
    return lines

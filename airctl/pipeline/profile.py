"""``airctl profile MODEL.py``: compile, then run the model several times on the recording executor.

The compile is airctl's normal one (:func:`airctl.pipeline.compile.compiler.compile_model`, ledger
``command = "profile"``, every stage captured, eager check on the first run). After that first
run, still inside the compile's capture session, the compiled model runs ``warmup`` more times
unrecorded and ``steps`` times recorded: every compiled graph's executor run leaves timed ops
per stream, sync edges and races in one :class:`~airctl.execute.timeline.Timeline` per graph
(events carry ``OpEvent.step``; times are seconds from the start of their step). Each timeline
is written to ``<ledger>/profile/timeline_<graph>.json``; the summaries, Chrome trace and
picture are :mod:`airctl.profile`'s business.

Timed execution exists where the executor runs: the ``sim`` backend. On an NPU the device runs
the graphs, and ``airctl profile analyze`` reads torch_npu's profiler output instead.

The three flows of ``airctl profile`` return a :class:`ProfileOutcome` for the command to render:
:func:`profile_and_summarize` (one run), :func:`compare_profiles` (without, then with the passes)
and :func:`analyze_profile_folder` (a torch_npu profiler folder). Each writes its files into the
ledger's ``profile/`` folder before it returns.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.execute.executor import DEFAULT_TIMEOUT_S
from airctl.execute.timeline import Race, Timeline
from airctl.ledger_files import is_ledger
from airctl.pipeline.profile_files import write_profile
from airctl.pipeline.run.rank import RankRun
from airctl.pipeline.target import Target
from airctl.profile.compare import Comparison
from airctl.profile.noise import DEFAULT_ROUNDS
from airctl.profile.ranks import MultiRankSummary
from airctl.profile.summary import ProfileSummary, summarize
from airctl.profile.write import COMPARE_FILE, PROFILE_DIR, write_json


@dataclass
class ProfileRequest:
    target: Target  # the model, mode, pass file (compared without it by --compare) and shared settings
    steps: int = 5
    warmup: int = 1
    out_dir: Path = Path("airctl-runs")
    threads_per_stream: int = 1
    timeout_s: float = DEFAULT_TIMEOUT_S  # multi-stream executor (sim): longest wait before it stops the run
    command_line: list[str] | None = None  # recorded in the ledger (the run's origin)
    rank: RankRun | None = None  # a rank of a multi-rank profile (pipeline/ranks/worker.py)

    def without_passes(self) -> ProfileRequest:
        """The same profile with no pass file (``--compare``'s other side)."""
        return replace(self, target=replace(self.target, passes_file=None))


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
    return profile_rounds(req, 1, progress)[0]


def profile_rounds(req: ProfileRequest, rounds: int, progress: Callable[[str], None] | None = None) -> list[ProfileRun]:
    """Compile once, then profile ``rounds`` times (each round ``warmup`` + ``steps``, recorded on its
    own): one :class:`ProfileRun` per round, all in the compile's ledger, whose timelines are the
    last round's."""
    from airctl.execute.recorder import Recorder
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    say = progress or (lambda _msg: None)
    if req.steps < 1 or req.warmup < 0:
        return [_failed(req, AirctlError(f"invalid --steps {req.steps} / --warmup {req.warmup}",
                                         hint="profile at least one step; warmup may be 0"))]
    pre = post = None
    if req.target.passes_file is not None:
        try:
            from airctl.pipeline.pass_hooks import build_hooks

            hooks = build_hooks(req.target.passes_file)
        except AirctlError as e:
            return [_failed(req, e)]
        pre, post = hooks.pre_pass, hooks.post_pass

    recorded: list[tuple[Any, list[float]]] = []  # (its recorder, its steps' seconds) per round

    def profiled_steps(run_once: Callable[[], Any], execution: Any) -> None:
        for k in range(rounds):
            rec, seconds = Recorder(keep_events=False), []
            recorded.append((rec, seconds))
            with execution.recording(rec):
                timed_steps(run_once, rec, req.warmup, req.steps,
                            say if rounds == 1 else (lambda msg, k=k: say(f"round {k + 1}/{rounds}: {msg}")),
                            into=seconds)

    result = compile_model(CompileRequest(
        req.target, out_dir=Path(req.out_dir), pre_pass=pre, post_pass=post, command="profile",
        threads_per_stream=req.threads_per_stream, stream_timeout_s=req.timeout_s, after_run=profiled_steps,
        command_line=req.command_line, rank=req.rank,  # never incremental: it measures the steps (docs/incremental.md)
    ), progress=say)
    ids = result.session.graph_ids_by_name() if result.session is not None else {}
    execution = result.execution
    runs = []
    for rec, step_seconds in recorded or [(Recorder(keep_events=False), [])]:
        timelines = list(rec.timelines.values())
        write_timelines(timelines, step_seconds, Path(result.ledger_dir), ids, req.threads_per_stream)
        warnings = []
        if not timelines and result.error is None:
            backend = result.backend.name if result.backend is not None else "?"
            warnings.append(f"no timeline was recorded: the {backend} backend does not run graphs on airctl's "
                            "executor (timed multi-stream runs exist under sim; on an NPU use "
                            "`airctl profile analyze`)")
        runs.append(ProfileRun(
            ledger_dir=Path(result.ledger_dir), timelines=timelines, races=[r for _, r in rec.races] or
            _races_from_rows(result.races), matches_eager=execution.matches_eager if execution else None,
            max_abs_error=execution.max_abs_error if execution else None, step_seconds=step_seconds,
            error=result.error, warnings=warnings))
    return runs


def timed_steps(run_once: Callable[[], Any], rec: Any, warmup: int, steps: int, say: Callable[[str], None],
                into: list[float]) -> None:
    """``warmup`` untimed calls, then ``steps`` timed ones whose events ``rec`` keeps step by step; each
    step's seconds go to ``into`` as it ends (a step that fails leaves the earlier ones)."""
    for k in range(warmup):
        say(f"warmup {k + 1}/{warmup}")
        run_once()
    rec.keep_events = True
    try:
        for k in range(steps):
            say(f"step {k + 1}/{steps}")
            rec.start_step(k)
            t0 = time.perf_counter()
            run_once()
            into.append(time.perf_counter() - t0)
    finally:
        rec.keep_events = False


def write_timelines(timelines: list[Timeline], step_seconds: list[float], ledger_dir: Path,
                    graph_ids: dict[str, str], threads_per_stream: int = 1) -> None:
    """Complete each timeline (graph id, one entry per step) and write it to ``<ledger>/profile/``."""
    for tl in timelines:
        tl.meta.setdefault("graph_id", graph_ids.get(tl.graph))
        tl.meta.setdefault("threads_per_stream", threads_per_stream)
        tl.steps = len(step_seconds)
        while len(tl.step_seconds) < len(step_seconds):
            tl.step_seconds.append(0.0)
    folder = ledger_dir / PROFILE_DIR
    if timelines:
        folder.mkdir(parents=True, exist_ok=True)
        for tl in timelines:
            (folder / f"timeline_{_safe(tl.graph)}.json").write_text(json.dumps(tl.to_json(), default=str),
                                                                     encoding="utf-8")


def _failed(req: ProfileRequest, error: AirctlError) -> ProfileRun:
    return ProfileRun(Path(req.out_dir), [], [], None, None, [], error)


def _races_from_rows(rows: list[dict[str, Any]]) -> list[Race]:
    keys = ("reader", "producer", "reader_stream", "producer_stream", "reader_source", "producer_source", "message")
    return [Race(**{k: r.get(k) for k in keys}) for r in rows]


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "graph"


# -- the flows of `airctl profile` ------------------------------------------------------------------
@dataclass
class ProfileOutcome:
    """What ``airctl profile`` shows: one summary, or a comparison of two; and the model runs behind it.

    Neither is set when a run recorded no timeline (see the runs' warnings and error).
    """

    summary: ProfileSummary | None = None
    comparison: Comparison | None = None
    runs: list[ProfileRun] = field(default_factory=list)  # model runs, in order (none for analyze)
    ranks: MultiRankSummary | None = None  # analyze of a folder holding several ranks
    notes: list[str] = field(default_factory=list)  # analyze: what the readers warned about (file:line)

    @property
    def error(self) -> AirctlError | None:
        return next((r.error for r in self.runs if r.error is not None), None)

    @property
    def warnings(self) -> list[str]:
        return [w for r in self.runs for w in r.warnings] + list(self.notes)

    @property
    def races(self) -> list[Any]:
        """The races found (with the passes first, when comparing): the command exits 1 on any."""
        if self.comparison is not None:
            return list(self.comparison.with_passes.races) + list(self.comparison.without.races)
        if self.ranks is not None:
            return [race for r in self.ranks.ranks for race in r.summary.races]
        return list(self.summary.races) if self.summary is not None else []

    def to_json(self) -> dict[str, Any] | None:
        if self.comparison is not None:
            return self.comparison.to_json()
        if self.ranks is not None:
            return self.ranks.to_json()
        if self.summary is None:
            return None
        return {**self.summary.to_json(), "findings": self._findings()}

    def _findings(self) -> list[dict[str, Any]]:
        """The profiled run's verdict findings (its index.json ``findings``), as compile --json and show --json
        carry them."""
        from airctl.ledger.reader import Ledger

        run = self.runs[-1] if self.runs else None
        if run is None or not is_ledger(run.ledger_dir):
            return []
        return list(Ledger.open(Path(run.ledger_dir)).index.to_json().get("findings") or [])


def profile_and_summarize(req: ProfileRequest, *, png: bool = False, top: int = 10,
                          progress: Callable[[str], None] | None = None) -> ProfileOutcome:
    """Profile the model, then summarise the run and write its files into ``<ledger>/profile/``."""
    run = profile_model(req, progress=progress)
    if not run.timelines:
        return ProfileOutcome(runs=[run])
    return ProfileOutcome(summary=summarize_run(run, req, png=png, top=top), runs=[run])


def compare_profiles(req: ProfileRequest, *, png: bool = False, top: int = 10,
                     progress: Callable[[str], None] | None = None, repeats: int = DEFAULT_ROUNDS) -> ProfileOutcome:
    """Profile without ``req.target.passes_file`` and with it, ``repeats`` rounds each: each side compiled
    once (one ledger each), its rounds run back to back on the compiled model; ``compare.json`` goes
    into the ledger with the passes. Each side's files are its median round's. The judgement over
    the rounds is :mod:`airctl.profile.noise`'s."""
    if repeats < 1:
        raise AirctlError(f"invalid --repeats {repeats}", hint="at least 1; 3 or more to tell a difference from noise")
    say = progress or (lambda _msg: None)
    runs: list[ProfileRun] = []
    sides: dict[bool, list[tuple[ProfileRun, ProfileSummary]]] = {False: [], True: []}
    requests = {False: req.without_passes(), True: req}
    for with_passes, one in requests.items():
        label = f"with {req.target.passes_file.name}: " if with_passes else "without passes: "
        side = profile_rounds(one, repeats, progress=lambda msg, label=label: say(f"{label}{msg}"))
        runs += side
        if any(not run.timelines for run in side):
            return ProfileOutcome(runs=runs)
        sides[with_passes] = [(run, summarize_run(run, one, write=False)) for run in side]
    typical = {side: _median_round(rounds) for side, rounds in sides.items()}
    for side, (run, _summary) in typical.items():  # the files of the round the table shows
        write_timelines(run.timelines, run.step_seconds, Path(run.ledger_dir), {}, req.threads_per_stream)
        typical[side] = (run, summarize_run(run, requests[side], png=png, top=top))
    comparison = Comparison(typical[False][1], typical[True][1], str(req.target.passes_file),
                            rounds_without=[s for _, s in sides[False]], rounds_with=[s for _, s in sides[True]])
    write_json(Path(sides[True][-1][0].ledger_dir) / PROFILE_DIR / COMPARE_FILE, comparison.to_json())
    return ProfileOutcome(comparison=comparison, runs=runs)


def _median_round(rounds: list[tuple[ProfileRun, ProfileSummary]]) -> tuple[ProfileRun, ProfileSummary]:
    """The round whose step time is the (lower) median of its side's: the one the table shows."""
    ordered = sorted(rounds, key=lambda r: r[1].step_s if r[1].step_s is not None else float("inf"))
    return ordered[(len(ordered) - 1) // 2]


def analyze_profile_folder(folder: Path, ledger: Path | None = None, *, out: Path = Path("airctl-runs"),
                           png: bool = False, top: int = 10,
                           progress: Callable[[str], None] | None = None) -> ProfileOutcome:
    """Summarise what torch_npu's profiler wrote, every rank of it; files go to ``<ledger>/profile/``
    (or ``<out>/analyze-<folder>/profile/`` without a ledger: one trace with a process per rank)."""
    from airctl.profile.analyze import analyze
    from airctl.profile.ranks import summarize_analysis

    analysis = analyze(folder, ledger, progress)
    summary = summarize_analysis(analysis, top=top)
    single = isinstance(summary, ProfileSummary)
    name = analysis.timelines[0].graph if single else Path(folder).resolve().name
    source = Path(analysis.ranks[0].data.folder if single else folder).resolve()
    target = Path(ledger) / PROFILE_DIR if ledger else analysis_dir(Path(out), name, source) / PROFILE_DIR
    ranks = "" if single else f", {len(analysis.ranks)} ranks"
    write_profile(target, analysis.timelines, summary, title=f"{name} (torch_npu profiler{ranks})", png=png)
    if isinstance(summary, ProfileSummary):
        return ProfileOutcome(summary=summary, notes=analysis.warnings)
    return ProfileOutcome(ranks=summary, notes=analysis.warnings)


def analysis_dir(out: Path, name: str, source: Path) -> Path:
    """``<out>/analyze-<name>``, or ``-2``, ``-3``… when that one holds the analysis of another folder
    of the same name (``source.txt`` says which folder each one analysed)."""
    from airctl.ledger.run_folder import slug

    name = slug(name)  # a file-name part: a rank's name has a space ("rank 0"), printed paths are copied
    for n in range(1, 1000):
        folder = out / (f"analyze-{name}" if n == 1 else f"analyze-{name}-{n}")
        marker = folder / "source.txt"
        try:
            if not folder.exists() or (marker.is_file() and marker.read_text(encoding="utf-8").strip() == str(source)):
                folder.mkdir(parents=True, exist_ok=True)
                marker.write_text(f"{source}\n", encoding="utf-8")
                return folder
        except OSError as e:
            raise AirctlError(f"cannot write the analysis into {folder}: {e.strerror or e}", file=str(folder),
                              hint="pass a writable --out folder") from e
    raise AirctlError(f"too many analyses named analyze-{name} in {out}", hint="pass another --out")


def summarize_run(run: ProfileRun, req: ProfileRequest, *, png: bool = False, top: int = 10,
                  write: bool = True) -> ProfileSummary:
    """The summary of one model run, with where it came from in ``meta``; written into ``<ledger>/profile/``
    (``write``)."""
    model, passes, mode = req.target.model_path, req.target.passes_file, req.target.mode
    summary = summarize(run.timelines, races=list(run.races), step_seconds=list(run.step_seconds) or None, top=top)
    summary.meta.update({"ledger": str(run.ledger_dir), "model": str(model),
                         "passes_file": str(passes) if passes else None, "mode": str(mode),
                         "matches_eager": run.matches_eager, "max_abs_error": run.max_abs_error})
    if not write:
        return summary
    title = f"{model.name}" + (f" + {passes.name}" if passes else "") + f" ({mode})"
    write_profile(Path(run.ledger_dir) / PROFILE_DIR, run.timelines, summary, title=title, png=png)
    return summary

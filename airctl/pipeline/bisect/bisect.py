"""``airctl bisect``: which pass makes a compile bad, and which of its placements.

>>> target = Target(Path("fixtures/models/blocks.py"), mode="reduce-overhead",
...                 passes_file=Path("fixtures/passes/bisect_race.yaml"))
>>> result = bisect(BisectRequest(target, condition=Condition.make("race")))              # doctest: +SKIP
>>> result.culprit["pass"], result.culprit["placements"][0]["unit"]                        # doctest: +SKIP
('blocks-on-stream1', 'mm..relu (blocks.0)')

Every step is one compile of the model, in this process, judged by a
:class:`~airctl.pipeline.bisect.conditions.Condition`, with its own ledger kept under
``<out>/bisect-<id>/`` (index.json ``bisect`` says what the step changed) and ``bisect.json``
beside them. The levels, in order (each a binary search, ``O(log n)`` compiles):

1. **YAML pass** — apply the first ``k`` passes of the file; the smallest bad ``k`` names the pass.
   Bad with no YAML pass at all: the cause is elsewhere, and the next level runs without them.
2. **TorchAir pass** — switch TorchAir's own FX/GE passes off (:mod:`airctl.hooks.pass_switch`):
   all of them, then the first ``m`` on; the smallest bad ``m`` names the pass the failure
   needs, confirmed by a run with only that one off. Passes that cannot be switched off are
   listed. Still bad with all of them off: none is needed.
3. **Placements** — inside the culprit YAML pass, delta debugging over the units it placed
   (:mod:`airctl.passes.placements`) down to a 1-minimal set that is still bad.

A last run repeats the culprit's configuration with the report written and, for wrong numbers,
a node-by-node compare around the culprit pass (:mod:`airctl.instrument.layerwise`): the first
FX node whose value differs, with its source line. A run that fails in a way the condition cannot
judge (a race cannot show in a compile that failed) counts as good, and its step says so.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.io.paths import shareable
from airctl.ledger.run_folder import new_run_id
from airctl.pipeline.bisect.conditions import Condition, Verdict
from airctl.pipeline.bisect.facts import culprit_facts, torchair_passes, units_of
from airctl.pipeline.bisect.identity import TrackedCondition
from airctl.pipeline.bisect.search import ddmin, first_bad_prefix
from airctl.pipeline.target import Progress, Target

MAX_COMPILES = 80


class BisectError(AirctlError):
    """The bisection cannot start or cannot go on (the failure does not happen, too many compiles);
    ``result``: what it had found by then (no culprit), once it had begun."""

    result: BisectResult | None = None


@dataclass(frozen=True)
class Config:
    """One configuration a step compiles."""

    yaml: tuple[str, ...] | None  # the YAML passes applied, in file order; None: no pass file
    torchair_off: tuple[str, ...] = ()  # TorchAir passes switched off
    placements: tuple[int, ...] | None = None  # the units of the culprit YAML pass kept (None: all)


@dataclass
class Step:
    number: int
    level: str  # start | yaml | torchair | placements | culprit
    purpose: str
    config: Config
    verdict: Verdict
    ledger: Path
    seconds: float

    @property
    def bad(self) -> bool:
        return self.verdict.bad

    def to_json(self) -> dict[str, Any]:
        c = self.config
        return {"step": self.number, "level": self.level, "purpose": self.purpose,
                "yaml_passes": list(c.yaml) if c.yaml is not None else None, "torchair_off": list(c.torchair_off),
                "placements": list(c.placements) if c.placements is not None else None, **self.verdict.to_json(),
                "ledger": str(self.ledger), "seconds": round(self.seconds, 2)}


@dataclass
class BisectRequest:
    target: Target  # the model, mode and pass file to bisect; every step compiles it (passes switched)
    condition: Condition = field(default_factory=Condition.make)  # numerics
    out_dir: Path = Path("airctl-runs")
    max_compiles: int = MAX_COMPILES


@dataclass
class BisectResult:
    folder: Path
    request: BisectRequest
    steps: list[Step]
    decisions: list[dict[str, Any]]  # {"level", "text", "steps"}
    culprit: dict[str, Any] | None
    cannot_switch_off: list[dict[str, Any]] = field(default_factory=list)
    problem: dict[str, Any] | None = None  # the starting run's: what every step is searched for

    def to_json(self) -> dict[str, Any]:
        t = self.request.target
        return {"model": str(t.model_path), "passes": str(t.passes_file) if t.passes_file else None,
                "mode": str(t.mode), "bad": self.request.condition.describe(), "folder": str(self.folder),
                "compiles": len(self.steps), "problem": self.problem, "culprit": self.culprit,
                "decisions": self.decisions,
                "steps": [s.to_json() for s in self.steps], "cannot_switch_off": self.cannot_switch_off}


class Bisector:
    """Runs and caches the steps of one bisection."""

    def __init__(self, req: BisectRequest, progress: Progress) -> None:
        if isinstance(req.max_compiles, bool) or not isinstance(req.max_compiles, int) or req.max_compiles < 1:
            raise BisectError(f"--max-compiles must be a positive number of compiles, not {req.max_compiles!r}",
                              hint=f"the default is {MAX_COMPILES}")
        self.req = req
        self.say = progress
        self.spec: Any = None
        if req.target.passes_file is not None:
            from airctl.passes import load

            self.spec = load(req.target.passes_file)  # a bad file is refused before anything compiles (or is created)
        self.folder = Path(req.out_dir) / f"bisect-{new_run_id(req.target.model_path.stem)}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.culprit: str | None = None  # the YAML pass whose placements are cut (level 3)
        self.steps: list[Step] = []
        self.cache: dict[Config, Step] = {}
        self.decisions: list[dict[str, Any]] = []
        self.tracked = TrackedCondition(req.condition)  # narrowed to the starting run's problem (identity.py)
        self.problem: dict[str, Any] | None = None
        self.cannot_switch_off: list[dict[str, Any]] = []  # the TorchAir passes level 2 cannot switch off
        self.model_dir = str(req.target.model_path.resolve().parent)

    def result(self, culprit: dict[str, Any] | None) -> BisectResult:
        return BisectResult(self.folder, self.req, self.steps, self.decisions, culprit, self.cannot_switch_off,
                            self.problem)

    def write(self, result: BisectResult) -> None:
        (self.folder / "bisect.json").write_text(json.dumps(result.to_json(), indent=1, default=str),
                                                 encoding="utf-8")

    @property
    def yaml_names(self) -> list[str] | None:
        return [p.name for p in self.spec.passes] if self.spec is not None else None

    def decide(self, level: str, text: str, steps: list[Step]) -> None:
        self.decisions.append({"level": level, "text": text, "steps": [s.number for s in steps]})
        self.say(f"-> {text}")

    def _hooks(self, config: Config) -> Any:
        if self.spec is None or config.yaml is None:
            return None
        from airctl.pipeline.pass_hooks import hooks_for

        passes = [dataclasses.replace(p, placements=list(config.placements))
                  if p.name == self.culprit and config.placements is not None else p
                  for p in self.spec.passes if p.name in config.yaml]
        spec = dataclasses.replace(self.spec, passes=passes)
        return hooks_for(spec, Path(self.req.target.passes_file or ".").resolve().parent)

    def run(self, config: Config, level: str, purpose: str, *, fresh: bool = False,
            instruments: tuple[Any, ...] = ()) -> Step:
        if not fresh and config in self.cache:
            return self.cache[config]
        if len(self.steps) >= self.req.max_compiles:
            count = len(self.steps)
            raise BisectError(f"bisect stopped after {count} compile{'s' if count != 1 else ''} (--max-compiles)",
                              hint=f"the steps so far are in {self.folder}; raise --max-compiles to go on")
        from airctl.pipeline.compile.compiler import CompileRequest, compile_model

        number = len(self.steps) + 1
        placements = {self.culprit: list(config.placements)} if config.placements is not None else None
        t0 = time.perf_counter()
        target = self.req.target
        target = dataclasses.replace(target, passes_file=target.passes_file if config.yaml is not None else None,
                         torchair_off=config.torchair_off)
        result = compile_model(CompileRequest(
            target, out_dir=self.folder, hooks=self._hooks(config), command="bisect", instruments=instruments,
            report=level == "culprit", incremental=True,  # steps after the first: from its pre-pass graph
            bisect={"step": number, "level": level, "purpose": purpose,
                    "yaml_passes": list(config.yaml) if config.yaml is not None else None,
                    "torchair_off": list(config.torchair_off), "placements": placements}))
        verdict = self.tracked.judge(result)
        if level == "start":
            problems = self.tracked.start(result, verdict)
            self.problem = {"why": self.shared(verdict.why), "step": number, "ledger": str(result.ledger_dir),
                            "problems": [p.to_json() for p in problems]}
        verdict = dataclasses.replace(verdict, why=self.shared(verdict.why))
        step = Step(number, level, purpose, config, verdict, result.ledger_dir, time.perf_counter() - t0)
        self.steps.append(step)
        self.cache.setdefault(config, step)
        word = "bad" if step.bad else ("unresolved" if step.verdict.unresolved else "good")
        why = step.verdict.why
        if level != "start" and self.problem is not None and why == self.problem["why"]:
            why = "the same as step 1"  # one race, printed once
        self.say(f"step {number} [{level}] {purpose}: {word} ({why}) {step.ledger}")  # never cut
        return step

    def shared(self, text: str) -> str:
        """``text`` with paths relative to the working directory or the model's folder (it is shared)."""
        return shareable(text, model_dir=self.model_dir)


def _yaml_level(b: Bisector, full: Step) -> tuple[Config, str | None]:
    """Level 1: the YAML pass that turns the run bad; returns the configuration the next levels start from."""
    names = b.yaml_names
    if names is None:
        return full.config, None
    none = b.run(Config(()), "yaml", "no YAML pass")
    if none.bad:
        b.decide("yaml", f"still bad with none of the {len(names)} YAML passes: the cause is not a YAML pass",
                 [full, none])
        return none.config, None
    tried: list[Step] = []

    def bad_prefix(prefix: list[str]) -> bool:
        step = b.run(Config(tuple(prefix)), "yaml", f"first {len(prefix)} of {len(names)} YAML passes")
        tried.append(step)
        return step.bad

    k = first_bad_prefix(names, bad_prefix)
    culprit = names[k - 1]
    before = f"the first {k - 1} are good" if k > 1 else "no YAML pass is good"
    b.decide("yaml", f"YAML pass {k} of {len(names)}, `{culprit}`, turns it bad ({before}, the first {k} are bad)",
             [none, *tried, full])
    return Config(tuple(names[:k])), culprit


def _torchair_level(b: Bisector, base: Step) -> dict[str, Any] | None:
    """Level 2: the TorchAir pass the failure needs (None when none is), switching passes off."""
    switches = torchair_passes(base.ledger)
    can = [s.name for s in switches if s.can_skip]
    cannot = [s.to_json() for s in switches if not s.can_skip]
    b.cannot_switch_off = cannot
    note = f"; {len(cannot)} cannot be switched off: " + ", ".join(c["pass"] for c in cannot) if cannot else ""
    if not can:
        b.decide("torchair", "no TorchAir pass of this run can be switched off" + note, [base])
        return None
    cfg = base.config
    all_off = b.run(dataclasses.replace(cfg, torchair_off=tuple(can)), "torchair",
                    f"all {len(can)} switchable TorchAir passes off")
    if all_off.bad:
        b.decide("torchair", f"still bad with all {len(can)} switchable TorchAir passes off: none of them is "
                             f"needed{note}", [all_off])
        return None
    tried: list[Step] = []

    def bad_with(on: list[str]) -> bool:
        step = b.run(dataclasses.replace(cfg, torchair_off=tuple(can[len(on):])), "torchair",
                     f"first {len(on)} of {len(can)} switchable TorchAir passes on")
        tried.append(step)
        return step.bad

    m = first_bad_prefix(can, bad_with)
    name = can[m - 1]
    alone = b.run(dataclasses.replace(cfg, torchair_off=(name,)), "torchair", f"only `{name}` off")
    kind = next(s.kind for s in switches if s.name == name)
    verdict = ("with only it off the run is good" if not alone.bad else
               "but with only it off the run is still bad: it matters together with the passes after it")
    b.decide("torchair", f"TorchAir pass `{name}` ({kind}) is needed for the failure: with the first {m - 1} "
                         f"switchable passes on the run is good, with {m} bad; {verdict}{note}",
             [all_off, *tried, alone])
    return {"pass": name, "kind": kind, "confirmed": not alone.bad}


def _placements_level(b: Bisector, base: Step, culprit: str) -> tuple[int, ...] | None:
    """Level 3: a 1-minimal set of the culprit's placements that is still bad (None: all, nothing to cut)."""
    units = units_of(base.ledger, culprit)
    if len(units) <= 1:
        what = f"one placement: {units[0]['unit']}" if units else "no placement recorded"
        b.decide("placements", f"`{culprit}` has {what}", [base])
        return None
    b.culprit = culprit
    tried: list[Step] = []

    def bad_with(keep: list[int]) -> bool:
        step = b.run(dataclasses.replace(base.config, placements=tuple(keep)), "placements",
                     f"`{culprit}` with placements {keep} of {len(units)}")
        tried.append(step)
        return step.bad

    keep = ddmin(list(range(len(units))), bad_with)
    shown = "; ".join(f"{i}: {units[i]['unit']}" for i in keep)
    b.decide("placements", f"of the {len(units)} placements of `{culprit}`, {len(keep)} still make it bad: {shown}",
             tried)
    return tuple(keep)


def bisect(req: BisectRequest, progress: Progress | None = None) -> BisectResult:
    """Run the bisection; raises :class:`BisectError` when the starting run is not bad."""
    b = Bisector(req, progress or (lambda _m: None))
    b.say(f"bisect: bad = {req.condition.describe()}; steps in {b.folder}")
    try:
        names = b.yaml_names
        full = b.run(Config(tuple(names) if names is not None else None), "start",
                     f"all {len(names)} YAML passes" if names is not None else "the model as given")
        if not full.bad:
            raise BisectError(f"the starting run is not bad: {full.verdict.why}", file=str(req.target.model_path),
                              hint=f"check --bad/--bad-if/--bad-cmd and --mode; the run is {full.ledger}")
        base_config, yaml_culprit = _yaml_level(b, full)
        base = b.cache[base_config]
        torchair = _torchair_level(b, base)
        keep = _placements_level(b, base, yaml_culprit) if yaml_culprit else None
        culprit = _finish(b, base, yaml_culprit, torchair, keep)
    except BisectError as e:
        e.result = b.result(None)
        raise
    finally:  # the steps so far, whatever ended it
        b.write(b.result(None))
    result = b.result(culprit)
    b.write(result)
    return result


def _finish(b: Bisector, base: Step, yaml_culprit: str | None, torchair: dict[str, Any] | None,
            keep: tuple[int, ...] | None) -> dict[str, Any] | None:
    """The culprit's own run (report written, layer-by-layer compare for numbers) and what it shows."""
    if yaml_culprit is None and torchair is None:
        b.decide("culprit", "no culprit pass: the run is bad with no YAML pass and every switchable TorchAir pass "
                            "off (the model, or a pass that cannot be switched off)", [])
        return None
    if yaml_culprit is not None:
        name, kind, stage_pass = yaml_culprit, "yaml", f"yaml:{yaml_culprit}"
    else:
        assert torchair is not None
        name, kind, stage_pass = str(torchair["pass"]), str(torchair["kind"]), str(torchair["pass"])
    config = dataclasses.replace(base.config, placements=keep) if keep is not None else base.config
    instruments: tuple[Any, ...] = ()
    layerwise = None
    if b.req.condition.kind == "numerics" and kind != "torchair-ge":  # values are compared on FX graphs
        from airctl.instrument.layerwise import LayerwiseCompare

        layerwise = LayerwiseCompare(stage_pass, b.req.condition.atol)
        instruments = (layerwise,)
    cut = f" with placements {list(keep)}" if keep is not None else ""
    last = b.run(config, "culprit", f"`{name}`{cut} once more, with its report", fresh=True, instruments=instruments)
    facts = culprit_facts(last.ledger, stage_pass, yaml_culprit is not None)
    culprit: dict[str, Any] = {"pass": name, "kind": kind, **facts, "ledger": str(last.ledger), "bad": last.bad,
                               "why": last.verdict.why, "why_from": f"step {last.number}: {last.purpose}"}
    if yaml_culprit and b.spec is not None:
        spec = b.spec.get(yaml_culprit)
        culprit["declared_at"] = f"{spec.file}:{spec.line}" if spec is not None else None
        if torchair is not None:
            culprit["with"] = torchair
        if b.req.condition.kind in ("race", "check") and b.problem is not None:
            from airctl.pipeline.fix import missing_wait

            culprit["should_wait"] = missing_wait(Path(b.problem["ledger"]), b.spec, yaml_culprit, b.req.target.mode)
    if layerwise is not None:
        found = [f for f in layerwise.found if f.get("divergence")]
        culprit["divergence"] = found[0]["divergence"] if found else None
        culprit["divergence_note"] = None if found else "; ".join(
            f.get("skipped") or "no node's value differs on the synthetic inputs" for f in layerwise.found) or None
    b.decide("culprit", f"`{name}` ({culprit['kind']})" + (f", nodes {', '.join(culprit['nodes'])}"
                                                                     if culprit.get("nodes") else ""), [last])
    return culprit

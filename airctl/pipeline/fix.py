"""``airctl passes fix``: the user's pass file plus the record/wait passes that close its races.

A race report says what is wrong; the user still has to find the consumer, learn the selector
syntax and check every mode. This verb does it end to end, from a run's ledger:

1. the plan graph of each compiled graph — the stage after the pass file's last pass (``yaml:<name>``),
   else ``aot-<kind>`` for a run without passes — is verified under every mode's synchronisation
   (max-autotune, reduce-overhead, npugraph_ex);
2. :func:`airctl.passes.fix.plan_fix` turns each race into a wait before its consumer (and a record
   after its producer where no record of the plan already follows it);
3. the user's file is copied **verbatim** (every pass and comment kept) with the new passes appended
   to its ``passes:`` list, and parsed back to prove it loads and keeps every user pass;
4. the result is applied in every mode (``passes apply --plan``: compiled up to the passes, into a
   scratch folder so the current run does not change) and each plan graph verified: the file is
   handed over only race-free in all three modes (else the command says where and exits 1).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.modes import Mode
from airctl.pipeline.target import EveryMode

RACE = "race_cross_stream_without_wait"
NOT_BY_WAITS = {"foreign_stream_ops"}  # the namespace follows the mode's config: not the plan's fault


@dataclass
class FixResult:
    run: Path
    pass_file: str | None
    output: Path | None
    races: int
    passes: list[Any] = field(default_factory=list)  # FixPass
    unclosed: list[str] = field(default_factory=list)
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)  # mode -> {errors, first, incremental_from}
    yaml: str = ""

    @property
    def race_free(self) -> bool | None:
        """None when the result was written but not checked (``--no-check``)."""
        if self.unclosed:
            return False
        if self.passes and not self.checks:
            return None
        return all(c.get("errors") == 0 for c in self.checks.values())

    def to_json(self) -> dict[str, Any]:
        return {"run": str(self.run), "pass_file": self.pass_file, "output": str(self.output) if self.output else None,
                "races": self.races, "passes": [p.to_json() for p in self.passes], "unclosed": self.unclosed,
                "checks": self.checks, "race_free": self.race_free}


def _plan_graphs(ledger: Any) -> dict[str, Any]:
    graphs = {}
    for gid in ledger.graph_ids():
        stages = ledger.stages(gid)
        chosen = ([s for s in stages if s.name.startswith("yaml:") and s.entry.dialect != "ge"]
                  or [s for s in stages if s.name.startswith("aot-")])
        if chosen:
            graphs[gid] = ledger.load(chosen[-1])
    return graphs


def plan_races(graphs: dict[str, Any]) -> tuple[list[tuple[str, str, str, Mode]], list[str]]:
    """Every mode's races of the plan graphs as (graph, producer, consumer, mode), and the other
    error findings (which no wait closes) as lines."""
    from airctl.verify.verifier import verify

    races: list[tuple[str, str, str, Mode]] = []
    others: list[str] = []
    for gid, graph in graphs.items():
        for mode in Mode:
            for f in verify(graph, mode):
                if f.severity != "error" or f.rule in NOT_BY_WAITS:
                    continue
                if f.rule == RACE and len(f.nodes) >= 2:
                    races.append((gid, f.nodes[0], f.nodes[1], mode))
                else:
                    others.append(f"{gid} ({mode}): {f.rule}: {f.message}")
    return races, others


def _append(text: str, addition: str) -> str:
    """``addition`` (list items) appended to the ``passes:`` list that ends ``text``."""
    return text.rstrip("\n") + "\n\n" + addition + "\n"


def _indent(text: str) -> str:
    found = re.search(r"^( *)- name:", text, re.M)
    return found.group(1) if found else "  "


def _pass_file(index: Any) -> tuple[Path | None, Any, str, str]:
    """The run's pass file (path, parsed, text) and the stage its fix passes run at."""
    from airctl.passes.spec import parse_text, pass_text

    source = Path(index.passes_resolved or index.passes) if (index.passes_resolved or index.passes) else None
    text = pass_text(source) if source else "version: 1\npasses:\n"
    user = parse_text(text, source) if source else None
    stage = "post" if user and any(p.stage == "post" for p in user.passes) else "pre"
    return source, user, text, stage


FIX_HINT = ("`airctl passes fix` appends these passes to a copy of the pass file (they close the races of every "
            "mode) and checks every mode:")


def fix_preview(ledger_dir: Path) -> Callable[[tuple[str, str] | None], str | None]:
    """The passes ``airctl passes fix`` would append for the run at ``ledger_dir``, as the YAML it writes:
    a function of a race (producer, consumer) giving the passes that close it (with the record they wait
    on), or of None giving them all; None where no wait closes it (or the run cannot be read). The race
    hints of ``passes apply``, ``compile`` and ``check`` are this text, so a hint is never a wait that
    ``fix`` would not write. The plan is worked out once, on the first call."""
    from functools import cache

    from airctl.ledger.reader import Ledger
    from airctl.passes.fix import FixPlan, plan_fix

    @cache
    def planned() -> tuple[FixPlan, str, str] | None:
        try:
            ledger = Ledger.open(ledger_dir)
            graphs = _plan_graphs(ledger)
            _, user, text, stage = _pass_file(ledger.index)
        except (AirctlError, OSError):
            return None
        races, _ = plan_races(graphs)
        plan = plan_fix(graphs, races, names={p.name for p in user.passes} if user else set(), stage=stage)
        return (plan, _indent(text), stage) if plan.passes else None

    def preview(race: tuple[str, str] | None = None) -> str | None:
        found = planned()
        if found is None:
            return None
        plan, indent, stage = found
        chosen = plan.passes
        if race is not None:
            waits = [p for p in plan.passes if p.kind == "wait"
                     and any(c.endswith(f": {race[1]} reads {race[0]}") for c in p.closes)]
            records = {w.fields.get("on") for w in waits}
            chosen = [p for p in plan.passes if p in waits or p.kind == "record" and p.name in records]
        if not chosen:
            return None
        text = FixPlan(chosen).yaml(indent, stage)  # without fix's comments: the races are listed beside it
        return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))

    return preview


def fix_passes(run: str | Path | None, out: Path, output: Path | None = None, *, check: bool = True,
               progress: Any = None, every: EveryMode | None = None) -> FixResult:
    """The run's pass file plus the waits that close its races, written to ``output`` and, with ``check``,
    applied in every mode with ``every``'s settings over the run's own (``--backend``, ``--seed``)."""
    from airctl.ledger.reader import Ledger
    from airctl.ledger.runs import resolve_run
    from airctl.passes.fix import plan_fix
    from airctl.passes.spec import parse_text

    root = resolve_run(out, run)
    ledger = Ledger.open(root)
    index = ledger.index
    graphs = _plan_graphs(ledger)
    if not graphs:
        raise AirctlError(f"run {root.name} has no graph to fix (status {index.status})", file=str(root),
                          hint="pick a run that compiled: `airctl runs` lists them, `--run ID` picks one")
    source, user, text, stage = _pass_file(index)
    races, others = plan_races(graphs)
    plan = plan_fix(graphs, races, names={p.name for p in user.passes} if user else set(), stage=stage)
    distinct = len({(g, p, c) for g, p, c, _ in races})
    result = FixResult(root, str(source) if source else None, None, distinct, plan.passes,
                       plan.unclosed + others)
    if not plan.passes:
        return result
    result.yaml = _append(text, plan.yaml(_indent(text), stage))
    if output is None:
        output = (source.with_name(source.stem + ".fixed.yaml") if source else Path("fixed.yaml"))
    fixed = parse_text(result.yaml, output)
    kept = [p.name for p in fixed.passes[: len(user.passes)]] if user else []
    if user and kept != [p.name for p in user.passes]:
        raise AirctlError("the fixed file does not keep the pass file's passes in order", file=str(output),
                          hint="the file's `passes:` list must be its last key; move it last and run again")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(result.yaml)
    result.output = output
    if check:
        result.checks = check_modes(output, index, progress=progress, every=every, kept_in=root.parent)
    return result


def check_modes(pass_file: Path, index: Any, *, progress: Any = None, every: EveryMode | None = None,
                kept_in: Path | None = None) -> dict[str, dict[str, Any]]:
    """``pass_file`` applied (up to the passes) in every mode, each plan graph verified in that mode. Each
    apply writes to a scratch folder, and starts from a pre-pass graph a run of ``kept_in`` (the fixed
    run's folder) kept under its key, where one does (the run's own mode, unless it was traced again
    since): ``incremental_from`` names that run (docs/incremental.md)."""
    from airctl.ledger.reader import Ledger
    from airctl.pipeline.apply import apply_passes
    model = Path((index.model or {}).get("resolved") or (index.model or {}).get("path"))
    settings = (every or EveryMode()).over(EveryMode.of_run(index))
    scratch = Path(tempfile.mkdtemp(prefix="airctl-fix-"))
    checks: dict[str, dict[str, Any]] = {}
    try:
        for mode in Mode:
            if progress is not None:
                progress(f"checking {pass_file.name} in {mode}")
            target = settings.target(model, mode=mode, entry=(index.model or {}).get("entry"), passes_file=pass_file)
            applied = apply_passes(target, out=scratch / mode.value, plan=True, with_diff=False, report=False,
                                   incremental=kept_in is not None, kept_in=kept_in)
            start = {"incremental_from": ((applied.index.incremental or {}).get("from")
                                          if applied.index is not None else None)}
            if applied.error is not None:
                checks[mode.value] = {"errors": 1, "first": applied.error.message, **start}
                continue
            races, others = plan_races(_plan_graphs(Ledger.open(applied.ledger_dir)))
            mine = [r for r in races if r[3] == mode]
            checks[mode.value] = {"errors": len(mine) + len([o for o in others if f"({mode})" in o]),
                                  "first": f"{mine[0][2]} reads {mine[0][1]}" if mine else None, **start}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return checks


def missing_wait(ledger_dir: Path, spec: Any, culprit: str, mode: Mode) -> dict[str, Any] | None:
    """For ``airctl bisect`` over a race: the wait the plan lacks (a race of ``mode`` in the whole
    file's run), the pass file's waits on the culprit's records (the passes that should have waited
    there), and the YAML that closes it."""
    from airctl.ledger.reader import Ledger
    from airctl.passes.fix import plan_fix

    graphs = _plan_graphs(Ledger.open(ledger_dir))
    races = [r for r in plan_races(graphs)[0] if r[3] == mode]
    if not races:
        return None
    names = {p.name for p in spec.passes} if spec is not None else set()
    plan = plan_fix(graphs, races, names=names, stage="pre")
    waits = [p.name for p in (spec.passes if spec is not None else []) if p.kind == "wait" and culprit in p.on]
    _, producer, consumer, _ = races[0]
    return {"consumer": consumer, "producer": producer, "waits_on_culprit": waits,
            "yaml": plan.yaml("  ", "pre"), "command": f"airctl passes fix {ledger_dir}"}

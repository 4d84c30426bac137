"""What a run found, printed the same way by every command that runs the model, and ``--fail-on``.

``compile`` printed races and findings while ``passes apply`` said only ``execution: matches
eager`` over the same racy ledger: a user trusted the green line. Every command that
runs the model (compile, passes apply, profile, run) now prints through :func:`print_verdicts`:

    verifier: 2 errors (race_cross_stream_without_wait ×2)
      first error: race_cross_stream_without_wait: sub on the default stream reads mm … [nodes mm, sub; seed.py:8]
        hint: insert `r = air.record()` after mm …
    stream races: 2 (reads of a value produced on another stream with no record/wait ordering them; …)
      first: add (seed.py:10) on the default stream reads abs_1 (seed.py:9) …

and honours ``--fail-on`` through :func:`enforce_fail_on` (exit 1, after the summary). Paths are
printed relative to the working directory or the model's folder (:mod:`airctl.io.paths`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from airctl.cli.output import err, escape, out
from airctl.io.paths import shareable


def _model_dir(index: dict[str, Any]) -> str | None:
    from pathlib import Path

    path = (index.get("model") or {}).get("path")
    return str(Path(path).resolve().parent) if path else None


RACE = "race_cross_stream_without_wait"


def print_findings(findings: list[dict[str, Any]], *, model_dir: str | None = None, console: Any = None,
                   fix: str | None = None) -> None:
    """Counts by severity and rule, then the first finding of each severity with its nodes and source line;
    a race's hint is ``fix`` when given (the passes ``airctl passes fix`` writes)."""
    if not findings:
        return
    console = console or out
    by_severity = Counter(str(f.get("severity") or "?") for f in findings)
    rules = Counter(str(f.get("rule")) for f in findings)
    counts = ", ".join(f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in sorted(by_severity.items()))
    listing = ", ".join(f"{rule} ×{n}" if n > 1 else rule for rule, n in rules.items())
    style = "red" if by_severity.get("error") else "yellow"
    console.print(f"[{style}]verifier: {escape(counts)}[/{style}] ({escape(listing)})")
    for severity in ("error", "warning", "info"):
        first = next((f for f in findings if f.get("severity") == severity), None)
        if first is None:
            continue
        where = [f"nodes {', '.join(map(str, first.get('nodes') or []))}"] if first.get("nodes") else []
        if first.get("source"):
            where.append(shareable(str(first["source"]), model_dir=model_dir))
        stage = f" at {first.get('graph')}/{first.get('stage')}" if first.get("stage") else ""
        tail = f" [{'; '.join(where)}]" if where else ""
        message = shareable(str(first.get("message")), model_dir=model_dir)
        console.print(f"  first {severity}{escape(stage)}: {escape(first.get('rule'))}: {escape(message)}"
                      f"{escape(tail)}")
        if fix and first.get("rule") == RACE:
            print_fix_hint(fix, model_dir=model_dir, console=console)
        elif first.get("hint"):
            console.print(f"    [cyan]hint:[/cyan] {escape(shareable(str(first['hint']), model_dir=model_dir))}")


def race_groups(races: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Races that are one race repeated (same lines and streams, e.g. once per layer), grouped."""
    alike: dict[tuple, list[dict[str, Any]]] = {}
    for row in races:
        key = (row.get("reader_source"), row.get("producer_source"), row.get("reader_stream"),
               row.get("producer_stream")) if row.get("reader_source") else (row.get("message"),)
        alike.setdefault(key, []).append(row)
    return list(alike.values())


def print_races(races: list[dict[str, Any]], *, limit: int = 5, model_dir: str | None = None,
                console: Any = None, fix: str | None = None, fix_shown: bool = False) -> None:
    """Stream races the multi-stream executor saw (sim): reads no record/wait orders. Each distinct
    race once, with its count; then the hint: ``fix``, the passes ``airctl passes fix`` would write
    (:func:`airctl.pipeline.fix.fix_preview`), else where the wait goes (the consumer)."""
    if not races:
        return
    console = console or out
    grouped = race_groups(races)
    console.print(f"[red]stream races: {len(races)}[/red] (reads of a value produced on another stream with no "
                  f"record/wait ordering them; outputs were computed as eager would, a device may not)")
    for i, same in enumerate(grouped[:limit]):
        row = same[0]
        label = "first" if i == 0 else "then"
        count = f" ×{len(same)}" if len(same) > 1 else ""
        message = shareable(str(row.get("message")), model_dir=model_dir)
        console.print(f"  {label}{count}: {escape(str(row.get('graph')))}: {escape(message)}")
    if len(grouped) > limit:
        console.print(f"  … and {len(grouped) - limit} more (index.json execution.races)")
    first = races[0]
    if fix and fix_shown:
        console.print("    [cyan]hint:[/cyan] the passes above (`airctl passes fix` writes them) close these too")
    elif fix:
        print_fix_hint(fix, model_dir=model_dir, console=console)
    elif first.get("reader"):
        console.print(f"    [cyan]hint:[/cyan] the wait goes before {escape(str(first['reader']))}, the consumer "
                      f"(on the {escape(str(first.get('reader_stream')))} stream); `airctl passes fix` writes the "
                      f"record/wait passes into a copy of the pass file and checks every mode")


def print_fix_hint(fix: str, *, model_dir: str | None = None, console: Any = None) -> None:
    """The hint for races: the passes ``airctl passes fix`` writes, as it writes them (every mode's races)."""
    from airctl.pipeline.fix import FIX_HINT

    console = console or out
    console.print("    [cyan]hint:[/cyan] " + escape(FIX_HINT))
    for line in fix.splitlines():
        console.print("    " + escape(shareable(line, model_dir=model_dir)), highlight=False)


def race_free_line(index: dict[str, Any]) -> str | None:
    """One line for a pass file's stream plan with no race: none on the sim executor in the run's mode,
    no error in the other modes' verdict (``other_modes``), no error finding. None otherwise, or when
    nothing was checked (no pass file, no execution)."""
    execution = index.get("execution") or {}
    if not index.get("passes") or not execution or execution.get("races") or index.get("other_modes"):
        return None
    if any(isinstance(f, dict) and f.get("severity") == "error" for f in index.get("findings") or []):
        return None
    from airctl.modes import Mode

    mode = str(index.get("mode"))  # index.json's text
    others = [m.value for m in Mode if m.value != mode]
    return f"stream plan: race-free in {mode} (the executor's run) and in {' and '.join(others)} (the verifier)"


def print_fixed(fixed: list[dict[str, Any]], *, verbose: bool = False, model_dir: str | None = None,
                console: Any = None) -> None:
    """Findings of intermediate stages that a later pass removed: never the run's errors. One line
    (the count and the passes that fixed them); ``verbose`` lists each distinct one with a count."""
    if not fixed:
        return
    console = console or out
    by_pass = Counter(str(f.get("fixed_by")) for f in fixed)
    passes = ", ".join(f"{p.removeprefix('yaml:')} ×{n}" if n > 1 else p.removeprefix("yaml:")
                       for p, n in by_pass.items())
    console.print(f"[dim]earlier stages: {len(fixed)} finding{'s' if len(fixed) != 1 else ''} fixed by a later "
                  f"pass ({escape(passes)}){'' if verbose else '; -v lists them'}[/dim]")
    if not verbose:
        return
    seen = Counter((f.get("rule"), f.get("stage"), f.get("fixed_by")) for f in fixed)
    for (rule, stage, by), n in seen.items():
        first = next(f for f in fixed if (f.get("rule"), f.get("stage"), f.get("fixed_by")) == (rule, stage, by))
        message = shareable(str(first.get("message")), model_dir=model_dir)
        console.print(f"  [dim]{escape(str(rule))} ×{n} at {escape(str(stage))}, fixed by pass "
                      f"{escape(str(by).removeprefix('yaml:'))} — first: {escape(message)}[/dim]")


def other_modes_line(rows: list[dict[str, Any]]) -> str | None:
    """One line: in which other modes the run's stream plan would race (``index.json`` ``other_modes``).

    >>> other_modes_line([{"other_mode": "reduce-overhead", "rule": "race_cross_stream_without_wait"}] * 2
    ...                  ).split(";")[0]
    'plan under other modes: 2 errors in reduce-overhead (race_cross_stream_without_wait ×2)'
    """
    if not rows:
        return None
    modes = list(dict.fromkeys(str(r.get("other_mode")) for r in rows))
    parts = []
    for m in modes:
        rules = Counter(str(r.get("rule")) for r in rows if r.get("other_mode") == m)
        n = sum(rules.values())
        parts.append(f"{n} error{'s' if n != 1 else ''} in {m} ("
                     + ", ".join(f"{k} ×{v}" if v > 1 else k for k, v in rules.items()) + ")")
    return (f"plan under other modes: {'; '.join(parts)}; see `airctl check --mode {modes[0]}`, "
            f"`airctl passes fix` adds the waits")


def print_verdicts(index: dict[str, Any], *, console: Any = None, verbose: bool = False,
                   ledger_dir: Any = None) -> None:
    """The run's one verdict (its ``index.json`` as a dict): the final graph's findings and the
    executor's races; then, never as errors, what later passes fixed and the other modes' verdict, or
    that the stream plan is race-free. ``ledger_dir``: the run's folder, where a race's hint is read
    from (the passes ``airctl passes fix`` would write for it)."""
    model_dir = _model_dir(index)
    console = console or out
    races = (index.get("execution") or {}).get("races") or []
    findings = index.get("findings") or []
    in_findings = any(f.get("rule") == RACE for f in findings if isinstance(f, dict) and f.get("severity") == "error")
    fix = None
    if ledger_dir is not None and (races or in_findings or index.get("other_modes")):
        from airctl.pipeline.fix import fix_preview

        fix = fix_preview(ledger_dir)(None)
    print_findings(findings, model_dir=model_dir, console=console, fix=fix)
    print_races(races, model_dir=model_dir, console=console, fix=fix, fix_shown=in_findings)
    print_fixed(index.get("fixed_findings") or [], verbose=verbose, model_dir=model_dir, console=console)
    line = other_modes_line(index.get("other_modes") or [])
    if line:
        console.print(f"[yellow]{escape(line)}[/yellow]")
        if fix and not races and not in_findings:
            print_fix_hint(fix, model_dir=model_dir, console=console)
    free = race_free_line(index)
    if free:
        console.print(f"[green]{escape(free)}[/green]")


def conclude(result: Any, fail_on: Any, *, atol: float | None = None) -> None:
    """The end of a command that compiled (``result``: anything with ``error``, ``index`` and
    ``ledger_dir``), once its result is shown: the run's error, else ``--fail-on``'s verdict."""
    if result.error is not None:
        raise result.error
    if result.index is not None:
        enforce_fail_on(fail_on, result, atol=atol)


def enforce_fail_on(fail_on: Any, result: Any, *, atol: float | None = None) -> None:
    """``--fail-on KIND``: exit 1 (after what was printed) when ``result`` (anything with ``index`` and
    ``ledger_dir``) shows it; says why on stderr."""
    if fail_on is None:
        _suggest_fail_on(result.index.to_json())
        return
    from airctl.errors import FindingsExit

    why = judge_fail_on(fail_on, result, atol=atol)
    if why is not None:
        err.print(f"--fail-on {getattr(fail_on, 'value', fail_on)}: {escape(why)}", highlight=False)
        raise FindingsExit()


def enforce_fail_on_ranks(fail_on: Any, result: Any, *, atol: float | None = None) -> None:
    """``--fail-on KIND`` of a multi-rank run that ended 0 (a ``RanksResult``): judged on each rank's own
    ledger; exit 1 when any shows it, each such rank named on stderr."""
    if fail_on is None:
        return
    from airctl.errors import FindingsExit
    from airctl.ledger.reader import Ledger

    bad = False
    for entry in result.ranks:
        if entry.ledger:
            why = judge_fail_on(fail_on, as_result(Ledger.open(result.ledger_dir / entry.ledger)), atol=atol)
            if why is not None:
                err.print(f"--fail-on {getattr(fail_on, 'value', fail_on)}: rank {entry.rank}: {escape(why)}",
                          highlight=False)
                bad = True
    if bad:
        raise FindingsExit()


def as_result(ledger: Any) -> Any:
    """A ledger read back (:class:`~airctl.ledger.reader.Ledger`) as what :func:`enforce_fail_on` judges."""
    from types import SimpleNamespace

    return SimpleNamespace(index=ledger.index, ledger_dir=ledger.root)


def judge_fail_on(fail_on: Any, result: Any, *, atol: float | None = None) -> str | None:
    """Why ``result`` (anything with ``index`` and ``ledger_dir``) shows ``--fail-on``'s kind, or None."""
    from airctl.pipeline.bisect.conditions import Condition

    kind = getattr(fail_on, "value", fail_on)
    condition = Condition.make(kind, atol=atol) if atol is not None else Condition.make(kind)
    verdict = condition.judge(result)
    return shareable(verdict.why, model_dir=_model_dir(result.index.to_json())) if verdict.bad else None


def _suggest_fail_on(index: dict[str, Any]) -> None:
    """A run that shows races or error findings still exits 0 without ``--fail-on``: one line says so,
    and how to make it fail (a script or CI reads the exit code, not the summary)."""
    races = bool((index.get("execution") or {}).get("races"))
    errors = any(isinstance(f, dict) and f.get("severity") == "error" for f in index.get("findings") or [])
    kinds = [kind for kind, shown in (("race", races), ("check", errors)) if shown]
    if kinds:
        flags = " or ".join(f"--fail-on {kind}" for kind in kinds)
        err.print(f"hint: the command still exits 0; {flags} makes it exit 1 (for scripts and CI)",
                  markup=False, highlight=False)

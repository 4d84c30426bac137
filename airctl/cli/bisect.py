"""``airctl bisect MODEL.py``: which pass makes the compile bad, and which of its placements.

Thin (style.md §8): parse options, call :func:`airctl.pipeline.bisect.bisect.bisect`, render its
result. Each step's line goes to stderr as it finishes; the table of steps, the decisions, the
culprit and its diff go to stdout (``--json``: only the JSON). Exit 0 once the bisection
finished (culprit or not); 2 when the starting run is not bad, the options are wrong, or
``--max-compiles`` stopped it (``--json`` then still prints the steps so far, with ``error`` and
``hint``, once the first step has run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.options import atol_option, config_option, entry_option, mode_option, out_option, run_option
from airctl.cli.shown import Shown, raising
from airctl.cli.target import EVERY_MODE, EveryMode, build_target
from airctl.modes import Bad, Mode

HELP = help_text(
    "Find the pass that makes a compile bad: first the YAML pass (apply a prefix of --passes), then the "
    "TorchAir FX or GE pass (switch TorchAir's own passes off), then, inside the YAML pass, the smallest set of "
    "its placements that is still bad (delta debugging). Each step is one compile with its own ledger, kept "
    "under --out/bisect-<id>/ with bisect.json.\n\n"
    "Bad means (one of): --bad numerics (default: outputs differ from eager beyond --atol), race (the executor "
    "reports a stream race), check (the verifier finds an error), compile (the compile fails); --bad-if EXPR "
    "(a Python expression on index.json, evaluated without eval: names status, execution, races, stages, "
    "error_findings, ...); --bad-cmd CMD (a shell command exiting non-zero; {ledger} and $AIRCTL_LEDGER "
    "name the step's ledger).",
    "airctl bisect fixtures/models/blocks.py --passes fixtures/passes/bisect_race.yaml --mode reduce-overhead --bad "
    "race",
    "airctl bisect fixtures/models/blocks.py --passes fixtures/passes/bisect_numbers.yaml",
    "airctl bisect model.py --bad-cmd '! airctl dump {ledger} --stage fx-final --type fx | grep -q aten.reshape'",
)


def register(app: typer.Typer) -> None:
    @command(app, "bisect", help=HELP)
    def bisect_cmd(
        model: str = typer.Argument(None, metavar="[MODEL.py|RUN]", show_default=False,
                                    help="Model script (.py), or a run whose model, pass file and mode to bisect "
                                         "(an id, a unique part, `latest`, a folder); default: the current run."),
        passes: Path = typer.Option(None, "--passes", "-p", help="YAML pass file whose passes are bisected.",
                                    show_default=False),
        mode: Mode = mode_option(None, help="TorchAir mode (default: the run's, else max-autotune)."),
        bad: Bad = typer.Option(None, "--bad", help="What a bad run is (default numerics).", show_default=False),
        bad_if: str = typer.Option(None, "--bad-if", metavar="EXPR", show_default=False,
                                   help="Bad when this expression on index.json is true."),
        bad_cmd: str = typer.Option(None, "--bad-cmd", metavar="CMD", show_default=False,
                                    help="Bad when this shell command exits non-zero ({ledger}: the step's ledger)."),
        atol: float = atol_option(),
        out: Path = out_option("Folder for the bisect-<id> folder."),
        run: str = run_option("The run whose model, pass file and mode to bisect, as RUN."),
        every: EveryMode = EVERY_MODE,
        entry: str = entry_option(),
        cmd_timeout: float = typer.Option(600.0, "--cmd-timeout", metavar="SECONDS",
                                          help="Time limit of each --bad-cmd run; past it, the command and every "
                                               "process it started are killed and the step counts as unresolved."),
        max_compiles: int = typer.Option(80, "--max-compiles", min=1,
                                         help="Stop after this many compiles (exit 2; --json still prints the "
                                              "steps so far)."),
        option: list[str] = config_option(),
    ) -> Shown:
        from airctl.cli.output import err, escape
        from airctl.pipeline.bisect.bisect import BisectError, BisectRequest, bisect
        from airctl.pipeline.bisect.conditions import Condition
        from airctl.pipeline.source import MODELS, choose_model, resolve_source

        condition = Condition.make(bad.value if bad else None, bad_if, bad_cmd, atol, cmd_timeout)
        source = resolve_source(model, run, out_dir=out, accepts=MODELS)
        chosen = choose_model(source, entry=entry, mode=mode, passes=passes,
                              reuse_passes=True)
        for warning in chosen.origin.warnings if chosen.origin else []:
            err.print(f"warning: {escape(warning)}", highlight=False)
        target = build_target(chosen.model, every, mode=chosen.mode, entry=chosen.entry, passes=chosen.passes,
                              option=option, atol=atol)
        request = BisectRequest(target, condition=condition, out_dir=out, max_compiles=max_compiles)
        try:
            result = bisect(request, progress=lambda msg: err.print(escape(msg), highlight=False))
        except BisectError as e:
            if e.result is None:
                raise
            # --json: the steps so far, as `compile --json` prints a failed run; then the error
            return Shown({**e.result.to_json(), "error": e.message, "hint": e.hint}, None, raising(e))
        return Shown(result, lambda: render(result.to_json()))


def render(data: dict[str, Any]) -> None:
    from airctl.cli.output import escape, out
    from airctl.io.paths import shareable

    out.print(f"[bold]bisect[/bold] {escape(shareable(data['model']))} ({data['mode']}"
              + (f", passes {escape(shareable(data['passes']))}" if data["passes"] else "")
              + f"): bad = {escape(data['bad'])}")
    problem = data.get("problem")
    if problem:  # first: the full file's problem, the one every step was searched for
        out.print(f"[bold]problem[/bold] (step {problem['step']}, the whole pass file): {escape(problem['why'])}")
    c = data["culprit"]
    if c is None:
        out.print("[bold]culprit:[/bold] none")
    else:
        where = f", {escape(shareable(c['declared_at']))}" if c.get("declared_at") else ""
        out.print(f"[bold]culprit:[/bold] [bold red]{escape(c['pass'])}[/bold red] ({c['kind']}{where})")
        for p in c.get("placements") or []:
            out.print(f"  placement {p['index']}: {escape(p['unit'])} — nodes {escape(', '.join(p['nodes']))}")
        if not c.get("placements") and c.get("nodes"):
            out.print(f"  nodes: {escape(', '.join(c['nodes']))}")
        if c.get("with"):
            out.print(f"  needs TorchAir pass: {escape(c['with']['pass'])} ({c['with']['kind']})")
        out.print(f"  why ({escape(c.get('why_from') or 'its run')}): {escape(c['why'])}")
        d = c.get("divergence")
        if d:
            out.print(f"  first diverging FX node: [bold]{escape(d['node'])}[/bold] ({escape(d['op'])}, was "
                      f"{escape(d['op_before'])}) at {escape(d['source'] or '?')}: {escape(d['message'])}")
        elif c.get("divergence_note"):
            out.print(f"  first diverging FX node: not found ({escape(c['divergence_note'])})")
        wait = c.get("should_wait")
        if wait:
            where = f"before {wait['consumer']}, the consumer of {wait['producer']}"
            if wait["waits_on_culprit"]:
                out.print(f"  the pass that should have waited: {escape(', '.join(wait['waits_on_culprit']))} "
                          f"(waits on {escape(c['pass'])}, but not {escape(where)})")
            else:
                out.print(f"  missing: a wait {escape(where)} — no pass of the file waits there")
            out.print(f"  add (or run `{escape(shareable(wait['command']))}`, which checks every mode):")
            out.print(escape(wait["yaml"]), highlight=False)
        out.print(f"  ledger: {escape(c['ledger'])}")
        if c.get("diff"):
            out.print(f"[bold]diff[/bold] ({escape(c['stage'] or '')}):")
            out.print(escape(c["diff"]), highlight=False)
    out.print("[bold]steps[/bold]")
    for s in data["steps"]:
        word = "[red]bad[/]" if s["bad"] else ("[yellow]unresolved[/]" if s["unresolved"] else "[green]good[/]")
        out.print(f"  step {s['step']:>2}  {s['level']:<10} {escape(s['purpose'])}: {word}  "
                  f"[dim]{escape(Path(s['ledger']).name)}[/dim]")
    out.print("[bold]decisions[/bold]")
    for i, d in enumerate(data["decisions"], 1):
        steps = f" [dim](steps {', '.join(map(str, d['steps']))})[/dim]" if d["steps"] else ""
        out.print(f"  {i}. {d['level']}: {escape(d['text'])}{steps}")
    out.print(f"folder: {escape(data['folder'])} ({data['compiles']} compiles; bisect.json, one ledger per step)")

"""``airctl passes``: apply, plan, diff and explain declarative YAML passes (docs/passes.md).

The commands only parse options, call :mod:`airctl.pipeline.apply` and render what it returns;
``--json`` prints only JSON on stdout. Nothing here imports torch at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.options import (
    command_line,
    config_option,
    entry_option,
    mode_option,
    out_option,
    run_option,
)
from airctl.cli.shown import Shown, json_wanted
from airctl.cli.target import EVERY_MODE, EveryMode, build_target
from airctl.modes import Bad, Mode

HELP = help_text(
    "Declarative pass plugins: YAML files that put ops on other streams (scope_enter/scope_exit, record, wait), "
    "set TorchAir scope attributes, or call your own Python pass — through TorchAir's custom-pass hooks, with "
    "every pass snapshotted, timed and checked in the ledger.",
    "airctl passes list",
    "airctl passes apply stream.yaml          (to the current run's model: the last `airctl compile`)",
    "airctl passes apply passes/stream.yaml --model fixtures/models/seed.py --diff",
    "airctl passes apply passes/stream.yaml --model fixtures/models/seed.py --plan",
    "airctl passes explain passes/transformer_two_streams.yaml --model fixtures/models/transformer.py",
)

APPLY_HELP = (
    "Compile MODEL with the passes of FILE.yaml, run it once and compare with eager PyTorch. Each pass becomes a "
    "ledger stage yaml:<name> (snapshot, node delta, time, result check). --plan stops after the passes (no GE "
    "conversion, no execution) and shows what each pass would change; --diff prints a unified diff per pass that "
    "changed the graph, with node names normalised so renames do not show."
)

MODEL_OPT = typer.Option(None, "--model", "-M", show_default=False,
                         help="Model script (.py). Default: the current run's model, entry and mode (`airctl runs`).")
MODE_OPT = mode_option(None, help="TorchAir mode (default: the current run's when --model is not given, else "
                                  "max-autotune).", show_default=False)


def register(app: typer.Typer) -> None:
    passes = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode="rich")
    app.add_typer(passes, name="passes")
    from airctl.cli import suggest
    from airctl.cli.passes_fix import register_fix

    register_fix(passes)
    suggest.register(passes)

    @command(passes, "apply", help=APPLY_HELP, no_args_is_help=True)
    def apply_cmd(
        ctx: typer.Context,
        file: Path = typer.Argument(..., help="YAML pass file.", show_default=False),
        model: Path = MODEL_OPT,
        mode: Mode = MODE_OPT,
        plan: bool = typer.Option(False, "--plan", help="Stop after the passes: show their effect, compile nothing."),
        diff: bool = typer.Option(False, "--diff", help="Print a unified diff for every pass that changed the graph."),
        out: Path = out_option(),
        run: str = run_option("Take the model from this run instead of the current one."),
        every: EveryMode = EVERY_MODE,
        entry: str = entry_option(),
        fail_on: Bad = typer.Option(None, "--fail-on", show_default=False,
                                    help="Also exit non-zero (1) for this: race (the executor saw a stream race), "
                                         "check (an error finding); numerics and compile failures exit 3 anyway."),
        option: list[str] = config_option(),
        full: bool = typer.Option(False, "--full", help="Trace the model again even when a run of --out kept its "
                                  "pre-pass graph (incremental apply, docs/incremental.md; AIRCTL_INCREMENTAL=0)."),
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Say why the apply was or was not incremental, "
                                     "and print TorchAir's warnings as they come."),
    ) -> Shown:
        from airctl.cli.output import status
        from airctl.pipeline.apply import apply_passes

        chosen = _choose_model(file, model, entry, mode, out, run, "applying")
        target = build_target(chosen.model, every, mode=chosen.mode, entry=chosen.entry, passes=file, option=option,
                              verbose=verbose)
        with status("applying passes…") as spinner:
            result = apply_passes(target, out=out, plan=plan, with_diff=diff or plan or json_wanted(),
                                  progress=lambda msg: spinner.update(msg), command_line=command_line(ctx),
                                  incremental=not full)
        return Shown(result, lambda: render_apply(result, diff=diff or plan), lambda: _conclude(result, fail_on))

    @command(passes, "list", help="The pass kinds of the YAML format and their fields (from the schema).",
             json="Print the whole schema as JSON.")
    def list_cmd(
        kind: str = typer.Argument(None, help="Show one kind only.", show_default=False),
    ) -> Shown:
        from airctl.errors import AirctlError
        from airctl.passes import schema

        kinds = list(schema.KINDS)
        if kind is not None:
            if kind not in schema.KINDS:
                guess = schema.closest(kind, kinds)
                raise AirctlError(f"unknown pass kind `{kind}`",
                                  hint=(f"did you mean `{guess}`? " if guess else "") + "kinds: " + ", ".join(kinds))
            kinds = [kind]
        return Shown(schema.as_json(), lambda: render_kinds(kinds))

    @command(passes, "explain", no_args_is_help=True,
             help="For every selector of FILE.yaml: what it matches in MODEL's graphs (name, op, source line), "
                  "or, when nothing, the closest candidates. Compiles up to the passes only.")
    def explain_cmd(
        ctx: typer.Context,
        file: Path = typer.Argument(..., help="YAML pass file.", show_default=False),
        model: Path = MODEL_OPT,
        mode: Mode = MODE_OPT,
        out: Path = out_option(),
        run: str = run_option("Take the model from this run instead of the current one."),
        every: EveryMode = EVERY_MODE,
        entry: str = entry_option(),
    ) -> Shown:
        from airctl.cli.output import status
        from airctl.pipeline.apply import explain_passes

        chosen = _choose_model(file, model, entry, mode, out, run, "explaining")
        with status("compiling up to the passes…") as spinner:
            target = build_target(chosen.model, every, mode=chosen.mode, entry=chosen.entry, passes=file)
            result = explain_passes(target, out=out, progress=lambda msg: spinner.update(msg),
                                    command_line=command_line(ctx))
        return Shown(result, lambda: render_explain(result), lambda: _explained(result))


def _conclude(result: Any, fail_on: Any) -> None:
    """``passes apply``'s end: its warnings (stderr), then the run's error or ``--fail-on``."""
    from airctl.cli.output import render_error
    from airctl.cli.verdicts import conclude

    for warning in result.warnings:
        render_error(warning, "[bold yellow]warning:[/bold yellow]")
    conclude(result, fail_on)


def _explained(result: Any) -> None:
    from airctl.errors import FindingsExit

    if result.error is not None:
        raise result.error
    if result.unmatched:
        raise FindingsExit(len(result.unmatched))


def _choose_model(file: Path, model: Path | None, entry: str | None, mode: Mode | None, out: Path, run: str | None,
                  verb: str) -> Any:
    """The model to compile: --model, or the current run's (said on stderr, with any warning)."""
    from airctl.cli.output import err, escape
    from airctl.pipeline.source import MODELS, choose_model, resolve_source

    source = resolve_source(model, run, out_dir=out, accepts=MODELS, what="--model")
    chosen = choose_model(source, entry=entry, mode=mode, passes=None, give="--model MODEL.py")
    if chosen.origin is not None:
        origin = chosen.origin  # the mode that will run: --mode when given, else the run's
        err.print(f"{verb} {escape(file.name)} to {escape(chosen.model.name)} ({escape(chosen.mode)}; model from run "
                  f"{escape(origin.run.name)})", markup=True, highlight=False)
        for warning in chosen.origin.warnings:
            err.print(f"[bold yellow]warning:[/bold yellow] {escape(warning)}")
    return chosen


# -- rendering --------------------------------------------------------------------------------------
def _ms(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1000:.2f} ms"


def _check_text(check: dict[str, Any] | None) -> str:
    from airctl.cli.output import escape

    if not check:
        return "[dim]not checked[/dim]"
    if check.get("matches") is True:
        return "results kept"
    if check.get("matches") is False:
        return "[red]results changed[/red]"
    return f"[dim]check skipped: {escape(str(check.get('skipped')))}[/dim]"


def render_apply(result: Any, diff: bool) -> None:
    from airctl.cli.output import escape, out
    from airctl.errors import SpecError
    from airctl.io.paths import shareable

    mode = f" (mode {escape(result.mode)})" if getattr(result, "mode", None) else ""
    out.print(f"passes from {escape(shareable(str(result.pass_file)))}{mode}:")
    width = max((len(r.name) for r in result.passes), default=0)
    for run in result.passes:
        if run.error:
            change = "[red]failed[/red]"
        elif run.skipped:
            change = "[dim]skipped (optional)[/dim]"
        elif run.changed:
            delta = run.node_delta or 0
            change = f"[yellow]changed[/yellow] {'+' if delta >= 0 else ''}{delta} → {run.nodes} nodes"
        else:
            change = "[dim]unchanged[/dim]"
        check = _check_text(run.eager_check) if not run.error else escape(run.error)
        out.print(f"  {escape(run.graph)}  {escape(run.name.ljust(width))}  {escape((run.kind or '').ljust(14))}"
                  f"  {change}  {_ms(run.seconds)}  {check}")
    if not result.passes and result.error is None:  # the compile ran: the file holds no pass for its graphs
        out.print("  [dim]no YAML pass ran (the pass file lists none, or none for the graphs compiled)[/dim]")
    elif not result.passes and not isinstance(result.error, SpecError):  # the error printed says why
        out.print("  [dim]no YAML pass ran before the compile failed[/dim]")
    if diff:
        unchanged = [f"{r.graph}/{r.stage}" for r in result.passes if r.changed is False]
        for run in result.passes:
            if run.diff:
                out.print()
                for line in run.diff.splitlines():
                    style = ("bold" if line.startswith(("---", "+++")) else "green" if line.startswith("+")
                             else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else "")
                    out.print(f"[{style}]{escape(line)}[/{style}]" if style else escape(line))
        if unchanged:
            out.print(f"\n[dim]unchanged: {escape(', '.join(unchanged))}[/dim]")
    if result.plan and result.status == "planned":
        out.print("\nplan only: stopped after the passes (no conversion, no execution)")
    elif result.execution:
        ex = result.execution
        verdict = "[green]matches eager[/green]" if ex.get("matches_eager") else "[red]differs from eager[/red]"
        races = len(ex.get("races") or [])
        caveat = f"; but {races} stream race(s), below: a device may differ" if races else ""
        out.print(f"\nexecution: {verdict} (max abs error {ex.get('max_abs_error', 0):.3g}{caveat})")
    if getattr(result, "index", None) is not None:
        from airctl.cli.verdicts import print_verdicts

        print_verdicts(result.index.to_json(), ledger_dir=result.ledger_dir)  # as compile and profile print them
        if result.index.report and result.ledger_dir:
            out.print(f"report: {escape(str(result.ledger_dir / result.index.report))} (open in a browser)")
    if result.ledger_dir:
        out.print(f"ledger: {escape(str(result.ledger_dir))}")


def render_kinds(kinds: list[str]) -> None:
    from airctl.cli.output import escape, out
    from airctl.passes import schema

    out.print(f"YAML pass files, version {schema.VERSION}: `version: 1` and a list `passes:` (docs/passes.md)\n")
    common = set(schema.COMMON)
    for kind in kinds:
        sch = schema.KINDS[kind]
        out.print(f"[bold]{kind}[/bold] — {escape(sch['description'])}")
        for row in schema.fields_of(kind):
            if row["field"] in common:
                continue
            bits = [row["type"]] + ([row["required"]] if row["required"] else [])
            if row["default"] is not None:
                bits.append(f"default {row['default']!r}")
            out.print(f"  {row['field']} ({escape(', '.join(bits))}): {escape(row['description'])}")
        if "scope_keys" in sch:
            keys = ", ".join(f"{f}→{k}" for f, k in sch["scope_keys"])
            out.print(f"  [dim]scope_enter keys: {escape(keys)} (values are strings)[/dim]")
        out.print()
    out.print("[bold]every pass[/bold]: " + ", ".join(
        f"{k} ({v.get('type')}{', default ' + repr(v['default']) if 'default' in v else ''})"
        for k, v in schema.COMMON.items()))
    fields = ", ".join(f"{k} ({v.get('description', '')})" for k, v in schema.SELECTOR["properties"].items())
    out.print(f"[bold]selector[/bold]: {escape(fields)}")
    out.print(f"[bold]range[/bold]: {{from: selector, to: selector}} — {escape(schema.RANGE['description'])}")


def render_explain(result: Any) -> None:
    from airctl.cli.output import escape, out

    current = None
    for row in result.rows:
        head = (row.get("graph"), row["pass"])
        if head != current:
            current = head
            out.print(f"\n[bold]{escape(row['pass'])}[/bold] (stage {row.get('stage')}, graph {row.get('graph')})")
        if row.get("role") == "apply":
            out.print(f"  [red]could not apply[/red]: {escape(row.get('error', ''))}")
            continue
        matches = row.get("matches") or []
        label = f"  {row['role']}: {escape(row['description'])}"
        if matches:
            out.print(f"{label} → {len(matches)} node(s)")
            for m in matches[:8]:
                module = f"  ({m['module']})" if m.get("module") else ""
                out.print("    " + escape(f"{m['name']}  {m['op']}  {m.get('source') or ''}{module}"))
            if len(matches) > 8:
                out.print(f"    … {len(matches) - 8} more")
        else:
            opt = " [dim](optional: the pass is skipped)[/dim]" if row.get("optional") else ""
            out.print(f"{label} → [red]no match[/red]{opt}: {escape(row.get('message', ''))}")
            for c in row.get("candidates", [])[:5]:
                where = f" at {c['source']}" if c.get("source") else ""
                out.print(f"    closest {c['field']}: {escape(str(c['value']))} ({escape(c['why'])}{escape(where)})")
    if result.ledger_dir:
        out.print(f"\nledger: {escape(str(result.ledger_dir))}")

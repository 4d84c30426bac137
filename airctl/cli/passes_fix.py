"""``airctl passes fix``: write the pass file plus the waits that close its races (docs/passes.md).

Parses options, calls :func:`airctl.pipeline.fix.fix_passes`, renders the result: the passes it
added (as YAML, ready to read), where the file went, and the check in every mode. Exit 1 when a
race stays open in some mode, so a script can trust a 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.named_run import IN_RUNS, NamedRun
from airctl.cli.shown import Shown
from airctl.cli.target import EVERY_MODE, EveryMode

FIX_HELP = help_text(
    "Write RUN's pass file plus the record/wait passes that close every race the verifier finds in its plan "
    "(under max-autotune, reduce-overhead and npugraph_ex synchronisation): waits before each consumer, selected "
    "by source line or module (each: over repeated layers), every one of your passes kept as written. The result "
    "is applied in all three modes (up to the passes, in a scratch folder) and checked race-free before the "
    "command returns; exit 1 when a race stays open.",
    "airctl passes fix",
    "airctl passes fix 20261127-1154 -o passes/mlp.fixed.yaml",
)


def register_fix(passes: typer.Typer) -> None:
    @command(passes, "fix", help=FIX_HELP)
    def fix_cmd(
        which: NamedRun = IN_RUNS,
        output: Path = typer.Option(None, "--output", "-o", show_default=False,
                                    help="Where to write the fixed file (default: FILE.fixed.yaml beside FILE)."),
        no_check: bool = typer.Option(False, "--no-check", help="Do not apply the result in every mode."),
        every: EveryMode = EVERY_MODE,
    ) -> Shown:
        from airctl.cli.output import status
        from airctl.pipeline.fix import fix_passes
        from airctl.pipeline.output_claim import claim_run_output

        root = which.root
        claim_run_output(output, [root])  # never over the run, its model script or pass file
        with status("reading the run's plan…") as spinner:
            result = fix_passes(root, which.folder, output, check=not no_check,
                                progress=lambda msg: spinner.update(msg), every=every)
        return Shown(result, lambda: _render(result), lambda: _verdict(result))


def _render(result: Any) -> None:
    from airctl.cli.output import err, escape, out
    from airctl.io.paths import shareable

    if not result.passes:
        out.print(f"{result.races} race(s) in the plan: nothing to add" if not result.races else
                  f"{result.races} race(s), none reachable by a selector")
    else:
        out.print(f"added {len(result.passes)} pass(es) closing {result.races} race(s):")
        for p in result.passes:
            out.print(escape(p.yaml("  ", "pre")), highlight=False)
    for line in result.unclosed[:5]:
        err.print(f"not closed by a wait: {escape(shareable(line))}")
    for mode, check in result.checks.items():
        verdict = ("race-free" if check.get("errors") == 0
                   else f"{check['errors']} error(s): {check.get('first')}")
        out.print(f"check {mode}: {escape(verdict)}")
    if result.output is not None:
        out.print(f"wrote {escape(shareable(str(result.output)))} — "
                  f"`airctl passes apply {escape(shareable(str(result.output)))}` uses it")


def _verdict(result: Any) -> None:
    from airctl.errors import FindingsExit

    if result.race_free is False:
        raise FindingsExit()

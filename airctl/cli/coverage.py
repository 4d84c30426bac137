"""``airctl coverage MODEL.py``: every op TorchAir cannot convert to GE, before converting anything.

Thin (style.md §8): parse options, call :func:`airctl.pipeline.coverage.coverage`, render. Exit 0 when
TorchAir converts every op, 3 (with each op, its node count, first source line, reason and workaround)
when it does not, as a failed ``airctl compile --mode max-autotune`` would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.options import command_line, entry_option, out_option
from airctl.cli.shown import Shown
from airctl.cli.target import EVERY_MODE, EveryMode

HELP = help_text(
    "Which ops of MODEL.py TorchAir cannot convert to GE (max-autotune), all at once and in seconds: the model is "
    "traced as for max-autotune and its graph checked against TorchAir's converter table just before GE "
    "conversion, which does not run. Each op is listed with its node count, the first source line, why (no "
    "converter, auto-generation refused, a stub that raises) and a known workaround.",
    "airctl coverage fixtures/models/transformers/qwen3_moe.py",
    "airctl coverage model.py --json",
)


def register(app: typer.Typer) -> None:
    @command(app, "coverage", help=HELP, no_args_is_help=True, json="Print the answer as JSON on stdout.")
    def coverage_cmd(
        ctx: typer.Context,
        model: Path = typer.Argument(..., help="Model script (.py).", show_default=False),
        out: Path = out_option("Folder for ledgers (the coverage run leaves a minimal one)."),
        entry: str = entry_option(),
        every: EveryMode = EVERY_MODE,
    ) -> Shown:
        from airctl.cli.output import status
        from airctl.pipeline.coverage import coverage

        with status("tracing…"):
            found = coverage(model, entry=entry, out_dir=out, every=every, command_line=command_line(ctx))
        return Shown(found, lambda: _render(found), lambda: _verdict(found))


def _render(found: Any) -> None:
    from airctl.cli.output import escape, out

    if found.error is None:
        out.print(f"TorchAir converts every op ({found.graphs} graph(s) checked)", markup=False)
        return
    for op in found.ops:
        where = f" first at {op['source']}" if op.get("source") else ""
        out.print(escape(f"{op['op']}: {op['reason']}, {op['count']} node(s){where}"), highlight=False)
        out.print(escape(f"    {op['detail']}"), highlight=False)


def _verdict(found: Any) -> None:
    """Ops TorchAir would not convert: an error, after the list (not with --json, whose answer is the list)."""
    from airctl.cli.shown import json_wanted

    if found.error is not None and found.ops and not json_wanted():
        from airctl.errors import UnconvertibleOps

        # each op is listed above with its line: the error says how many, the hint what to do
        raise UnconvertibleOps(f"TorchAir would not convert this model to GE: the {len(found.ops)} op(s) above "
                               f"(ledger {found.ledger})", found.ops, hint=_for_coverage(found.error.hint))
    if found.error is not None:
        raise found.error


def _for_coverage(hint: str | None) -> str | None:
    """The compile's hint, pointing at this command's own ``--json``."""
    return hint.replace("`airctl compile ... --json` lists them under error_detail.unconvertible",
                        "`airctl coverage ... --json` lists them") if hint else hint

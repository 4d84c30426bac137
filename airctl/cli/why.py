"""``airctl why``: one table of every graph break, recompile, recapture and compile-cache decision of a run.

The command renders :func:`airctl.pipeline.why.why_run`'s table: in the terminal, a row per
event (text from the user's code and logs escaped, never read as markup), or ``--json`` (pure
JSON on stdout: :meth:`airctl.why.WhyTable.to_json`).
"""

from __future__ import annotations

from typing import Any

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.named_run import IN_OUT, NamedRun
from airctl.cli.output import escape
from airctl.cli.shown import Shown

WHY_HELP = help_text(
    "Why a run compiled more than once, broke into pieces, recaptured or missed TorchAir's compile cache: one "
    "table of every graph break, recompile (with the guard that failed, in words: \"x.size(0) was 8, now 16\"), "
    "recompile-limit fallback, npugraph_ex recapture and capture-limit fallback, and cache_compile hit / miss / "
    "invalidation (with the part of the key that changed), in the order they happened — each with its reason, "
    "the file:line in your code, the ledger graph it produced and a fix hint.\n\n"
    "The events are recorded by `airctl compile` and `airctl run` as they happen, and read by `airctl import` "
    "from an NPU machine's logs (TorchAir's DEBUG log and TORCH_LOGS=graph_breaks,recompiles output). "
    "RUN is a run id from `airctl runs` (a unique part is enough) or a ledger folder; default: the current run. "
    "Classes and hints: docs/why.md.",
    "airctl run train.py && airctl why",
    "airctl import npu-logs/ && airctl why --json",
)


def register(app: typer.Typer) -> None:
    @command(app, "why", help=WHY_HELP, json="Print the table as JSON on stdout (every row).")
    def why_cmd(
        which: NamedRun = IN_OUT,
        limit: int = typer.Option(LIMIT, "--limit", min=0, help="Rows shown in the terminal (0: all); --json "
                                  "writes every row."),
    ) -> Shown:
        from airctl.pipeline.why import why_run

        table = why_run(which.given, which.folder, which.run)
        return Shown(table, lambda: print_why(table, limit=limit or None))


LIMIT = 200  # rows the terminal shows by default: a table of thousands is read with --json


def print_why(table: Any, console: Any = None, limit: int | None = None) -> None:
    """The table in the terminal, a block per event (also the section of ``airctl show``), the first
    ``limit`` rows (None: all)::

         1  recompile      x.size(0) was 4, now 8
            at model.py:16 · graph 2-forward · compile 0/1
            hint: a dynamic shape avoids it: torch._dynamo.mark_dynamic(x, 0) ...
    """
    from airctl.cli.output import out
    from airctl.io.paths import shareable
    from airctl.why import summary_line

    console = console or out
    total = sum(table.counts().values())
    if not total:
        console.print(escape(f"why: {summary_line(table)} in this run"), highlight=False)
        if table.failed is not None:
            run = f" {table.run_id}" if table.run_id else ""
            console.print(escape(f"  the run failed ({table.failed}): `airctl show{run}` says where and why; "
                                 "a run that fails before it compiles has nothing here"), highlight=False)
        return
    console.print(f"[bold]why:[/bold] {escape(summary_line(table).removesuffix(': airctl why'))}"
                  f" [dim]({escape(table.origin)})[/dim]", highlight=False)
    width = len(str(total))
    for row in table.iter_rows():
        if limit is not None and row.n > limit:
            console.print(f"  … and {total - limit} more: `airctl why --json` (or --limit 0) lists every row",
                          highlight=False)
            break
        label = row.cls if row.what == row.cls else f"{row.cls} {row.what}"
        console.print(f"{str(row.n).rjust(width + 1)}  [bold]{escape(label)}[/bold]  {escape(row.reason)}",
                      highlight=False)
        place = [f"at {shareable(row.where)}" if row.where else "at –"]
        if row.graph:
            place.append(f"graph {row.graph}")
        if row.compile_id:
            place.append(f"compile {row.compile_id}")
        pad = " " * (width + 3)
        console.print(pad + "[dim]" + escape(" · ".join(place)) + "[/dim]", highlight=False)
        if row.hint:
            console.print(pad + "[cyan]hint:[/cyan] " + escape(row.hint), highlight=False)

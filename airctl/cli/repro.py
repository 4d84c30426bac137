"""``airctl repro RUN``: write a folder that reproduces a failing run (``bash run.sh`` inside it).

Thin (style.md §8): parse options, call :func:`airctl.pipeline.bisect.repro.repro`, render. Exit 0 when
the folder was written and its check run failed the same way; 2 when the run did not fail, the
folder cannot be written, or the check run does not fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.named_run import IN_RUNS, NamedRun
from airctl.cli.options import backend_option
from airctl.cli.shown import Shown
from airctl.modes import BackendName, Bad

HELP = help_text(
    "Write a self-contained reproducer of a failing run: the model (the script, or its Dynamo graph as a script "
    "when the script imports files beside it), the inputs' and weights' values (safetensors), the pass file cut "
    "to the run's passes and its plugins, the exact command in run.sh, versions.json and a README. `bash run.sh` "
    "in a copy of the folder, on any machine with airctl, fails the way the run did (exit 3 for wrong numbers or "
    "a failed compile, 1 for a race or an error finding). airctl checks that before it returns.\n\n"
    "RUN is a ledger folder (airctl compile, or a step of airctl bisect: its passes and placements are kept).",
    "airctl repro airctl-runs/<run-id> -o repro/",
    "airctl repro airctl-runs/<run-id> --minify      # the fewest graph nodes that still fail",
)


def register(app: typer.Typer) -> None:
    @command(app, "repro", help=HELP)
    def repro_cmd(
        which: NamedRun = IN_RUNS,
        out: Path = typer.Option(None, "--out", "-o", help="Folder to write (default: repro-<run id> beside RUN).",
                                 show_default=False),
        minify: bool = typer.Option(False, "--minify", help="Shrink the graph (delta debugging on its nodes) while "
                                    "the failure stays; the model is then its Dynamo graph."),
        graph: bool = typer.Option(False, "--graph", help="Write the Dynamo graph as the model even when the "
                                   "script could travel."),
        bad: Bad = typer.Option(None, "--bad", help="What failure to reproduce (default: what the run shows).",
                                show_default=False),
        backend: BackendName = backend_option(),
    ) -> Shown:
        from airctl.cli.output import err, escape
        from airctl.pipeline.bisect.repro import ReproRequest, repro

        request = ReproRequest(which.root, out, bad.value if bad else None, minify, graph, backend.value)
        result = repro(request, progress=lambda msg: err.print(escape(msg), highlight=False))
        return Shown(result, lambda: _render(result))


def _render(result: Any) -> None:
    from airctl.cli.output import escape
    from airctl.cli.output import out as stdout

    stdout.print(f"reproducer ({result.form} form, bad = {escape(result.condition.describe())}): "
                 f"{escape(str(result.folder))}")
    for f in result.files:
        stdout.print(f"  {escape(f)}")
    if result.minify:
        m = result.minify
        kept = ", ".join(m["kept"][:8]) + (f", … {len(m['kept']) - 8} more (--json lists them)"
                                           if len(m["kept"]) > 8 else "")
        stdout.print(f"minified: {m['nodes_before']} -> {m['nodes_after']} nodes ({escape(kept)}) in "
                     f"{m['compiles']} compiles")
    for note in result.notes:
        stdout.print(f"note: {escape(note)}")
    stdout.print(f"checked: `{escape(result.command)}` fails: {escape(result.verdict.why)}")
    stdout.print(f"run it: bash {escape(str(result.folder))}/run.sh")

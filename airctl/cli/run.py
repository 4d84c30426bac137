"""``airctl run``: run a TorchAir script unmodified, with every compiled graph captured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.options import atol_option, out_option
from airctl.cli.shown import Shown
from airctl.cli.target import EVERY_MODE, EveryMode, build_target
from airctl.limits import COLLECTIVE_TIMEOUT_S
from airctl.modes import Bad

HELP = help_text(
    "Run SCRIPT.py as `python SCRIPT.py ARGS...` would, with airctl's hooks on every TorchAir backend it "
    "creates (torchair.get_npu_backend, backend=\"npu\" / \"npugraph_ex\"): each compiled graph gets the "
    "stages of `airctl compile` in a ledger, TorchAir's dumps and the profiler's folders are recorded there, "
    "and each graph's outputs are compared with its Dynamo graph run eagerly.\n\n"
    "airctl's options go before SCRIPT.py; everything after it is passed to the script. The exit code is the "
    "script's (1 with its traceback when it raises); 3 when the script succeeded but a compiled graph's "
    "outputs differ from eager; 1 when it succeeded and --fail-on race|check finds what it names.",
    "airctl run custom_pass_multistream.py",
    "airctl run --out runs/ --backend sim train.py --steps 10",
    "airctl run --fail-on race custom_pass_multistream.py    (CI: exit 1 on a stream race)",
    "airctl run torchrun --nproc-per-node 2 train.py    (one ledger, a ledger per rank: docs/multi-rank.md)",
)


def register(app: typer.Typer) -> None:
    @command(app, "run", help=HELP, no_args_is_help=True,
             context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
             json="Print the run's index.json on stdout; the script's own output goes to stderr then.")
    def run_cmd(
        script: Path = typer.Argument(..., help="The Python script to run.", show_default=False),
        args: list[str] = typer.Argument(None, help="Arguments for the script.", show_default=False),
        out: Path = out_option("Folder for ledgers (one run per subfolder)."),
        every: EveryMode = EVERY_MODE,
        check: bool = typer.Option(True, "--check/--no-check",
                                   help="Compare each compiled graph's first call with its Dynamo graph run eagerly."),
        atol: float = atol_option(),
        collective_timeout: float = typer.Option(COLLECTIVE_TIMEOUT_S, "--collective-timeout", min=0, help=(
            "torchrun: default process-group timeout of every rank under sim (s; the script's own wins).")),
        watchdog: float = typer.Option(None, "--watchdog", min=0, show_default="collective timeout + 30 s", help=(
            "torchrun: stop every rank once one has been blocked in a collective this long (s; 0: never).")),
        fail_on: Bad = typer.Option(None, "--fail-on", show_default=False,
                                    help="Also exit 1 when the script succeeded but a run shows this: race (the "
                                         "executor saw a stream race), check (an error finding); with torchrun, "
                                         "any rank's."),
    ) -> Shown:
        from airctl.cli.output import err, escape
        from airctl.pipeline.ranks.launch import launcher_argv
        from airctl.pipeline.script.runner import RunRequest, run_script

        target = build_target(script, every, atol=atol)  # the script chooses its own modes
        launch = launcher_argv(str(script), list(args or []))
        if launch is not None:
            from airctl.cli.ranks import end_ranks, launch_ranks
            from airctl.pipeline.ranks.worker import RankRequest

            rank = RankRequest(command="run", target=target, check=check,
                               collective_timeout_s=collective_timeout or None)
            ranks = launch_ranks(launch, rank, out, watchdog=watchdog)
            return Shown(ranks.index, None, lambda: end_ranks(ranks, fail_on, atol=atol))
        request = RunRequest(target, args=list(args or []), out_dir=out, check=check)
        result = run_script(request, progress=lambda msg: err.print(escape(f"airctl: {msg}"),
                                                                    highlight=False))
        _print_summary(result)  # on stderr: stdout is the script's (or, with --json, the index's)
        return Shown(result.index, None, lambda: _verdict(result, fail_on, atol))


def _verdict(result: Any, fail_on: Bad | None, atol: float) -> None:
    """The script's own end (its traceback, its status), else the run's error, else ``--fail-on``."""
    from airctl.cli.verdicts import conclude
    from airctl.errors import CommandExit
    from airctl.pipeline.script.errors import show

    if result.end.failed:
        show(result.end)  # what Python prints when the script ends this way
        raise CommandExit(result.exit_code)  # the script's own status
    conclude(result, fail_on, atol=atol)


def _print_summary(result: Any) -> None:
    from airctl.cli.output import err, escape

    index = result.index.to_json()
    graphs = index.get("graphs") or []
    stages = sum(len(g.get("stages") or []) for g in graphs)
    parts = [f"{len(graphs)} graph{'s' if len(graphs) != 1 else ''}", f"{stages} stages"]
    if index.get("dumps"):
        parts.append(f"{len(index['dumps'])} TorchAir dumps")
    if index.get("profiles"):
        parts.append(f"{len(index['profiles'])} profile{'s' if len(index['profiles']) != 1 else ''}")
    execution = index.get("execution")
    if execution:
        if execution["matches_eager"] is None:
            parts.append("outputs not checked")
        else:
            verdict = "match" if execution["matches_eager"] else "DIFFER FROM"
            parts.append(f"outputs of {execution['graphs_checked']}/{execution['graphs']} compiled graphs {verdict} "
                         f"eager (max abs error {execution['max_abs_error']:.3g})")
    from airctl.io.paths import shareable_path

    err.print(escape(f"airctl: ledger {shareable_path(result.ledger_dir)} — " + ", ".join(parts)), highlight=False)
    from airctl.cli.summary import why_line

    line = why_line(result.index)
    if line:
        err.print(escape(f"airctl: {line}"), highlight=False)  # stdout is the script's
    races = (execution or {}).get("races") or []
    if races:
        from airctl.cli.verdicts import print_races

        print_races(races, console=err)  # stdout is the script's

"""Running and summarising a multi-rank run for ``airctl run torchrun ...`` and ``--nproc N``.

Not a command of its own: ``run``, ``compile`` and ``profile`` come here when they are asked for
several ranks, with the RankRequest (the command and its Target) every rank reads back.
:func:`launch_ranks` calls :func:`airctl.pipeline.ranks.launch.run_ranks` and prints one line per
rank, the divergence between the ranks' collectives (if any) and the ledger; the exit code is
:attr:`RanksResult.exit_code`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airctl.cli.output import err, escape
from airctl.limits import COLLECTIVE_TIMEOUT_S


def launch_ranks(argv: list[str], rank: Any, out: Path, *, watchdog: float | None = None) -> Any:
    """Launch ``rank`` under torchrun's ``argv`` and print the summary (stderr); the RanksResult."""
    from airctl.pipeline.ranks.launch import RanksRequest, run_ranks

    result = run_ranks(RanksRequest(argv, rank, out_dir=out, watchdog_s=watchdog, command=rank.command),
                       progress=lambda msg: err.print(f"airctl: {escape(msg)}", highlight=False))
    print_ranks(result)
    return result


def end_ranks(result: Any, fail_on: Any = None, *, atol: float | None = None) -> None:
    """A multi-rank run's own ending: its error, or CommandExit with its code; when it ended 0,
    ``--fail-on`` judged on every rank's ledger."""
    from airctl.cli.verdicts import enforce_fail_on_ranks
    from airctl.errors import CommandExit

    if result.error is not None:
        raise result.error
    if result.exit_code:
        raise CommandExit(result.exit_code)
    enforce_fail_on_ranks(fail_on, result, atol=atol)


def compile_ranks_command(target: Any, nproc: int, *, out: Path,
                          collective_timeout: float = COLLECTIVE_TIMEOUT_S, fail_on: Any = None) -> Any:
    """``airctl compile MODEL.py --nproc N``: each rank compiles ``target`` as ``airctl compile`` would;
    ``--fail-on`` is judged on every rank's ledger. What it shows (:class:`~airctl.cli.shown.Shown`):
    the top ledger's index (--json); the terminal has the per-rank lines already."""
    from airctl.cli.shown import Shown
    from airctl.pipeline.ranks.launch import nproc_argv
    from airctl.pipeline.ranks.worker import RankRequest

    if target.passes_file is not None:
        from airctl.pipeline.pass_hooks import build_hooks

        build_hooks(target.passes_file)  # a bad pass file is refused before any rank starts
    rank = RankRequest(command="compile", target=target, collective_timeout_s=collective_timeout or None)
    result = launch_ranks(nproc_argv(nproc, target.model_path), rank, out)
    return Shown(result.index, None, lambda: end_ranks(result, fail_on, atol=target.atol))


def print_ranks(result: Any) -> None:
    """One line per rank, the divergence, the ledger (stderr: stdout belongs to the ranks' scripts)."""
    from airctl.io.paths import shareable_path

    for entry in result.ranks:
        style = "green" if entry.status == "ok" else "red"
        how = f", {entry.signal}" if entry.signal else (f", exit code {entry.exit_code}" if entry.exit_code else "")
        line = f"airctl: rank {entry.rank}: [{style}]{escape(str(entry.status))}[/{style}]{escape(how)}"
        if entry.error:
            line += f" — {escape(entry.error)}"
        err.print(line, highlight=False)
        if entry.stuck:
            err.print(f"  [bold red]stuck[/bold red] in its own code: {escape(entry.stuck)}", highlight=False)
        last = entry.last or {}
        if entry.status != "ok" and last.get("summary"):
            err.print(f"  last seen: {escape(last['summary'])}", highlight=False)
        if entry.log and entry.status != "ok":
            err.print(f"  console: {escape(entry.log.get('stderr') or entry.log.get('stdout', ''))}", highlight=False)
    for d in result.divergence:
        err.print(f"airctl: [bold red]divergence[/bold red]: {escape(d['message'])}", highlight=False)
    if result.index.error and any(e.stuck for e in result.ranks):
        err.print(f"airctl: [bold red]verdict[/bold red]: {escape(result.index.error)}", highlight=False)
    where = shareable_path(result.ledger_dir)
    err.print(f"airctl: ledger {escape(where)} — {len(result.ranks)} rank(s), status "
              f"{escape(str(result.index.status))} (per rank: {escape(where)}/ranks/<rank>)", highlight=False)


def profile_ranks_command(req: Any, nproc: int, *, compare: bool) -> Any:
    """``airctl profile MODEL.py --nproc N``: run, and show the per-rank overlap; races exit 1."""
    from airctl.cli.shown import Shown
    from airctl.errors import FindingsExit
    from airctl.pipeline.ranks.profile import profile_ranks

    outcome = profile_ranks(req, nproc, compare=compare,
                            progress=lambda msg: err.print(f"airctl: {escape(msg)}", highlight=False))
    for run in outcome.runs:
        print_ranks(run.result)

    def view() -> None:
        for run in outcome.runs:
            print_overlap(run)

    def verdict() -> None:
        end_ranks(outcome.runs[-1].result)
        if outcome.races:
            raise FindingsExit(outcome.races)

    return Shown(outcome, view, verdict)


def print_overlap(run: Any) -> None:
    from rich.table import Table

    from airctl.cli.output import out
    from airctl.profile.timeline_svg import format_time

    title = f"ranks ({run.mode}" + (f" + {Path(run.passes_file).name}" if run.passes_file else ", no passes") + ")"
    table = Table(title=escape(title), title_justify="left")
    for col in ("rank", "communication", "compute", "overlap", "overlap %", "busy per stream", "races"):
        table.add_column(col, justify="left" if col in ("rank", "busy per stream") else "right", no_wrap=True)
    for r in run.ranks:
        streams = " ".join(f"{s}={format_time(t)}" for s, t in r.streams.items())
        table.add_row(str(r.rank), format_time(r.comm_s), format_time(r.compute_s), format_time(r.overlap_s),
                      f"{r.overlap_pct:.1f}", escape(streams), str(len(r.races)))
    out.print(table)
    for r in run.ranks:
        for race in r.races[:5]:
            out.print(f"  [red]rank {r.rank} race[/red]: {escape(race)}")
    if run.trace:
        out.print(f"trace: {escape(str(run.trace))}  (a process per rank; open in https://ui.perfetto.dev)")
    out.print("[dim]sim: CPU timings (streams are threads, collectives run over gloo), not NPU kernels[/dim]")

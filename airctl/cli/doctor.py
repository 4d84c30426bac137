"""``airctl doctor``: show :func:`airctl.pipeline.doctor.diagnose` as a table, or as JSON."""

from __future__ import annotations

from typing import Any

import typer

from airctl.cli.declare import command
from airctl.cli.shown import Shown


def register(app: typer.Typer) -> None:
    @command(app, "doctor", json="Print the diagnosis (or what --stop-warm stopped) as JSON.")
    def doctor(stop_warm: bool = typer.Option(False, "--stop-warm",
                                              help="Stop this install's warm processes (docs/warm.md) and say which; "
                                                   "a command they run ends as terminated. The next "
                                                   "ledger-writing command starts one."),
               every: bool = typer.Option(False, "--all", help="With --stop-warm: every install's and environment's "
                                          "warm processes of this user, not only this install's.")) -> Shown:
        """Show versions (python, torch, torch_npu, TorchAir, CANN, graphviz), which backend `auto` picks and why,
        and the state of the warm process."""
        from airctl.cli.warm import describe
        from airctl.pipeline.doctor import diagnose

        if every and not stop_warm:
            from airctl.errors import AirctlError

            raise AirctlError("--all goes with --stop-warm", hint="airctl doctor --stop-warm --all")
        if stop_warm:
            return _stop_warm(every)
        data = {**diagnose(), "warm": describe()}
        return Shown(data, lambda: _render(data))


def _render(data: dict[str, Any]) -> None:
    from rich.table import Table

    from airctl.cli.output import escape, out

    table = Table(show_header=False, show_edge=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    missing = "[red]missing[/red]"
    table.add_row("airctl", data["airctl"])
    table.add_row("python", data["python"])
    table.add_row("torch", data["torch"] or missing)
    table.add_row("torch_npu", data["torch_npu"] or missing)
    ta = data["torchair"]
    table.add_row("torchair", f"bundled in torch-npu {ta['bundled_in_torch_npu']} at {escape(ta['path'])}"
                  if ta["path"] else missing)
    cann = data["cann"]
    table.add_row("CANN", ("[green]available[/green] " if cann["available"] else "[yellow]not available[/yellow] ")
                  + escape(cann["reason"]))
    gv = data["graphviz"]
    table.add_row("graphviz", f"python {gv['python'] or 'missing'}, dot: {escape(gv['dot'] or 'missing')}")
    table.add_row("chromium", escape(data["chromium"] or "missing (only the report tests need it)"))
    auto = data["backend_auto"]
    table.add_row("backend auto", f"[bold]{auto['name']}[/bold] — {escape(auto['reason'])}")
    var = next(iter(data["env"]))
    table.add_row(var, str(data["env"][var]) + " (airctl sets 0 for itself and the scripts it runs when "
                  "torch-npu is installed without CANN)")
    warm = data["warm"]
    table.add_row("warm process", escape(f"{warm['status']}" + (f", pid {warm['pid']}, {warm.get('forked', 0)} "
                  f"command(s) served" if warm.get("pid") else "") + f" — {warm['folder']} (docs/warm.md)"))
    out.print(table)
    for line in data["advice"]:
        out.print(f"[cyan]to do:[/cyan] {escape(line)}")


def _stop_warm(every: bool) -> Shown:
    from airctl.pipeline.warm import daemon, place

    rows = daemon.stop_all(place.folder(), every=every)
    stopped = [r for r in rows if not r.get("skipped")]

    def view() -> None:
        from airctl.cli.output import escape, out

        whose = "" if every else "this install's "
        for row in stopped:
            out.print(escape(f"stopped {whose}warm process pid {row['pid']}" if row["ended"] else
                             f"{whose}warm process pid {row['pid']} did not end within "
                             f"{daemon.GRACE_S + 5:g} s"), highlight=False)
        for row in rows:
            if row.get("skipped"):
                out.print(escape(f"left running: pid {row['pid']} of another install ({row['install']}); "
                                 "--stop-warm --all stops it"), highlight=False)
        if not stopped:
            out.print(escape(f"no warm process of {'this user' if every else 'this install'} running "
                             f"({place.folder()})"), highlight=False)

    return Shown({"stopped": stopped, "left": [r for r in rows if r.get("skipped")]}, view)

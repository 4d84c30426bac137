"""``airctl show --node``, ``--phases`` and ``--options``: the terminal text of
:mod:`airctl.pipeline.show`'s results (``--json`` prints the results themselves)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from airctl.cli.output import escape, out


def _pass(ref: dict[str, Any] | None) -> str:
    if not ref:
        return "?"
    if ref["by"] in ("AOT autograd", "airctl"):
        return ref["by"] + ("" if ref["name"] == ref["stage"] or ref["by"] == "AOT autograd" else f" {ref['name']}")
    return f"{ref['by']} {ref['name']}" + (f" ({ref['where']})" if ref.get("where") else "")


_EVENTS = {"appears": "first seen", "created": "created by", "moved": "moved to another stream by",
           "renamed": "renamed by", "replaced": "op replaced by", "removed": "gone: removed by",
           "same": "not yet there"}


def print_chains(result: dict[str, Any]) -> None:
    """Each graph's chain, from the task down to the source line."""
    for c in result["chains"]:
        out.print(f"[bold]{escape(c['query'])}[/bold] ({escape(c['found_as'])}) in graph {escape(c['graph'])}"
                  + (f": FX node {escape(c['node'])} {escape(c['op'] or '')}" if c["node"] != c["query"] else ""))
        for t in c["tasks"]:
            out.print(f"  task     {escape(t['task'])} on stream {escape(t['stream'])}: {t['count']} run(s), "
                      f"{t['total_us'] / 1000:.3f} ms in all")
        for g in c["ge_ops"]:
            out.print(f"  GE op    {escape(g['name'])} ({escape(g['op'])}) in {escape(g['stage'])}"
                      + (f" on stream {escape(g['stream'])}" if g.get("stream") else ""))
        if c["ge_note"]:
            out.print(f"  GE op    [dim]{escape(c['ge_note'])}[/dim]")
        for s in c["stages"]:
            if s["event"] == "same" and s is not c["stages"][0]:
                continue
            what = _EVENTS[s["event"]]
            by = f" {escape(_pass(s['by']))}" if s["by"] else ""
            detail = f" [dim]({escape(s['detail'])})[/dim]" if s.get("detail") else ""
            stream = f" on {escape(s['stream'])}" if s.get("stream") else ""
            out.print(f"  FX       {s['index']:>3} {escape(s['stage'])}: {escape(s['name'] or '-')}{stream} — "
                      f"{what}{by}{detail}")
        last = next((s for s in reversed(c["stages"]) if s["name"]), None)
        if last is not None and last is not c["stages"][-1]:
            out.print(f"  FX       gone after {escape(last['stage'])}")
        out.print(f"  origin   {escape(_pass(c['origin']))}"
                  + (f" [dim]({escape(c['origin_note'])})[/dim]" if c.get("origin_note") else ""))
        if c["dynamo"]:
            d = c["dynamo"]
            out.print(f"  Dynamo   {escape(', '.join(d['nodes']))}" + (f" ({escape(d['op'])})" if d["op"] else "")
                      + f" [dim]by {escape(d['how'])}[/dim]")
        out.print(f"  source   {escape(c['source'] or 'none recorded')}"
                  + (f", module {escape(c['module'])}" if c.get("module") else ""))


def _secs(v: float) -> str:
    return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.2f} s"


def print_phases(table: dict[str, Any]) -> None:
    """The phase table, longest first within the command's order, and the unattributed rest."""
    t = Table(title=f"phases of {table['command'] or 'the run'} {table['run']}", title_justify="left",
              show_edge=False, pad_edge=False)
    t.add_column("phase")
    t.add_column("×", justify="right")
    t.add_column("time", justify="right")
    t.add_column("share", justify="right")
    wall = table["wall_seconds"] or 0.0
    for row in table["rows"]:
        t.add_row(escape(row["phase"]), str(row["count"]), _secs(row["seconds"]),
                  f"{row['seconds'] / wall:.1%}" if wall else "")
    t.add_row("[dim]unattributed[/dim]", "", _secs(table["unattributed_seconds"]),
              f"{table['unattributed_seconds'] / wall:.1%}" if wall else "")
    out.print(t)
    share = f"{table['share']:.1%}" if table["share"] is not None else "?"
    out.print(f"attributed: {share} of {_secs(wall)} (start-up and the run's time until its ledger closed)")
    if not table["recorded"]:
        out.print("[yellow]the run records no timing ends (an older ledger): phases are placed by the stages alone"
                  "[/yellow]")


def print_options(table: dict[str, Any]) -> None:
    """Every option: where it was set, whether TorchAir got it, and which stage it changed."""
    if not table["rows"]:
        out.print("no option was given (--option, CompilerConfig, ge_config, npugraph_ex options)")
        return
    t = Table(show_edge=False, pad_edge=False)
    for col in ("option", "value", "set in", "reached TorchAir", "changed"):
        t.add_column(col)
    for row in table["rows"]:
        t.add_row(escape(row["option"]), escape(str(row["value"])), escape(row["set_in"]),
                  {True: "yes", False: "[red]no[/red]", None: "?"}[row["reached"]], escape(row["changed"]))
    out.print(t)

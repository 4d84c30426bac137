"""``airctl show --node``, ``--assignment``, ``--kernels``, ``--phases`` and ``--options``: the terminal text of
:mod:`airctl.pipeline.show`'s results (``--json`` prints the results themselves)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from airctl.cli.output import escape, out, seconds


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


ASSIGNMENT_ROWS = 400  # node rows printed per graph (--json has every one)


def print_assignment(table: dict[str, Any]) -> None:
    """Per graph: each final FX node's category and GE op(s), then the totals by category."""
    static = table["static_kernel_option"]
    if not table["graphs"]:
        out.print("the run has no FX graph (a multi-rank run keeps its graphs in ranks/<rank>: show that run)")
    for g in table["graphs"]:
        captured = ""
        if g["captured"] is not None:
            captured = (", fell back to eager" if g["fell_back"] else
                        f", captured graph key(s): {', '.join(map(str, g['captured'])) or 'none recorded'}")
        out.print(f"[bold]graph {escape(g['graph'])}[/bold] at {escape(g['stage'])}{escape(captured)}")
        rows = g["nodes"][:ASSIGNMENT_ROWS]
        width = max((len(r["node"]) for r in rows), default=0)
        cat = max((len(r["category"]) for r in rows), default=0)
        for row in rows:
            sk = row["static_kernel"]
            tags = [f"static kernel: {'yes' if sk else 'no'}"] if sk is not None else []
            tags += [f"super kernel {row['super_kernel']}"] if row["super_kernel"] else []
            tags += [f"on {row['stream']}"] if row["stream"] else []
            out.print(f"  {escape(row['node'].ljust(width))}  {escape(row['category'].ljust(cat))}  "
                      f"{escape(row['op'])}: {escape(row['detail'])}"
                      + (f" [dim]({escape(', '.join(tags))})[/dim]" if tags else ""),
                      soft_wrap=True)
        if len(g["nodes"]) > ASSIGNMENT_ROWS:
            out.print(f"[dim]… {len(g['nodes']) - ASSIGNMENT_ROWS} more nodes (--json lists every one)[/dim]")
        out.print("totals: " + ", ".join(f"{escape(k)} {v}" for k, v in g["totals"].items()))
    if len(table["graphs"]) > 1:
        out.print("all graphs: " + ", ".join(f"{escape(k)} {v}" for k, v in table["totals"].items()))
    if static:
        out.print(f"static kernels: {'asked for' if table['static_kernels'] else 'not asked for'} ({escape(static)})")
    stat = table["compile_stat"]
    out.print(f"GE compile statistics ({escape(stat['status'])}): {escape(stat['note'])}"
              + (f" [dim]{escape(stat['file'])}[/dim]" if stat.get("file") else ""))


def print_kernels(table: dict[str, Any]) -> None:
    """The share of kernel time mapped to source lines, the lines by time, and what did not map."""
    share = table["share"]
    ok = share is not None and share >= table["target"]
    text = f"{share:.1%}" if share is not None else "no kernel time"
    out.print(f"device kernel time mapped to a source line: [{'green' if ok else 'red'}]{text}[/] of "
              f"{table['kernel_us'] / 1000:.3f} ms (target {table['target']:.0%}; sync tasks apart: "
              f"{table['sync_us'] / 1000:.3f} ms)"
              + (" — " + ", ".join(f"{escape(k)} {v / 1000:.3f} ms" for k, v in table["mapped_by"].items())
                 if table["mapped_by"] else ""))
    for row in table["lines"][:50]:
        tasks = ", ".join(t + ("" if how == "by name" else f" ({how})") for t, how in row["tasks"].items())
        out.print(f"  {row['us'] / 1000:9.3f} ms  {escape(row['source'])}  [dim]{escape(tasks)}[/dim]")
    if len(table["lines"]) > 50:
        out.print(f"  [dim]… {len(table['lines']) - 50} more lines (--json lists every one)[/dim]")
    for row in table["unmapped"]:
        out.print(f"  [yellow]unmapped[/yellow] {row['us'] / 1000:9.3f} ms  {escape(row['task'])} "
                  f"×{row['count']}: {escape(row['reason'])}")


def print_phases(table: dict[str, Any]) -> None:
    """The phase table, longest first within the command's order, and the unattributed rest."""
    t = Table(title=escape(f"phases of {table['command'] or 'the run'} {table['run']}"), title_justify="left",
              show_edge=False, pad_edge=False)
    t.add_column("phase")
    t.add_column("×", justify="right")
    t.add_column("time", justify="right")
    t.add_column("share", justify="right")
    wall = table["wall_seconds"] or 0.0
    for row in table["rows"]:
        t.add_row(escape(row["phase"]), str(row["count"]), seconds(row["seconds"]),
                  f"{row['seconds'] / wall:.1%}" if wall else "")
    t.add_row("[dim]unattributed[/dim]", "", seconds(table["unattributed_seconds"]),
              f"{table['unattributed_seconds'] / wall:.1%}" if wall else "")
    out.print(t)
    share = f"{table['share']:.1%}" if table["share"] is not None else "?"
    out.print(f"attributed: {share} of {seconds(wall)} (start-up and the run's time until its ledger closed)")
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

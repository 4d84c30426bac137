"""The terminal summary of a compile run: graphs, stages, node counts, changes, timings, check, races.

The ledger path is printed last, on stdout, so ``airctl compile ... | tail -1`` gives it.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from airctl.cli.output import err, escape, one_line, out, seconds
from airctl.cli.verdicts import print_verdicts
from airctl.io.paths import shareable_path


def stage_table(graph: dict[str, Any], show_all: bool = False, measured: bool = True) -> Table:
    """A graph's stages; ``measured``: the run timed its stages (an import's moments are its own reading)."""
    title = f"graph {graph.get('id')} ({graph.get('name') or '?'}, {graph.get('kind')})"
    table = Table(title=escape(title), title_justify="left",
                  show_edge=False, pad_edge=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("stage")
    table.add_column("nodes", justify="right")
    table.add_column("Δ", justify="right")
    table.add_column("changed")
    table.add_column("time", justify="right")
    hidden = 0
    previous: float | None = None  # elapsed at the stage before (time: a pass's own, else since that stage)
    for s in graph["stages"]:
        changed = s.get("changed")
        elapsed = s.get("elapsed")
        took = s.get("seconds")
        if took is None and measured and elapsed is not None and previous is not None:
            took = max(0.0, elapsed - previous)
        previous = elapsed if elapsed is not None else previous
        if not show_all and changed is False and s["name"].startswith(("after:", "ge:after:")):
            hidden += 1
            continue
        delta = s.get("node_delta")
        delta_txt = "" if not delta else (f"[green]+{delta}[/green]" if delta > 0 else f"[red]{delta}[/red]")
        mark = {True: "[yellow]changed[/yellow]", False: "[dim]–[/dim]", None: ""}[changed]
        table.add_row(escape(s["index"]), escape(s["name"]), escape(s["nodes"]), delta_txt, mark, seconds(took))
    notes = ["time: a pass's own; other stages: since the stage before" if measured else
             "time: a pass's own, as its log says (an import times nothing itself)"]
    if hidden:
        notes.append(f"{hidden} unchanged passes hidden (see index.json)")
    table.caption = "; ".join(notes)
    return table


def capture_lines(captures: list[dict[str, Any]]) -> list[str]:
    """npugraph_ex's captures per graph (index.json ``captures``), one line per graph then one per
    recapture or fallback.

    >>> capture_lines([{"graph": "2-inference", "event": "capture", "call": 1, "reason": "first call"},
    ...                {"graph": "2-inference", "event": "recapture", "call": 2, "reason": "shapes: [8]"}])
    ['graph 2-inference recaptured 1 time', '  call 2: shapes: [8]']
    """
    lines: list[str] = []
    graphs = list(dict.fromkeys(str(c.get("graph")) for c in captures))
    for graph in graphs:
        rows = [c for c in captures if str(c.get("graph")) == graph]
        recaptures = [c for c in rows if c.get("event") == "recapture"]
        fallback = next((c for c in rows if c.get("event") == "fallback"), None)
        head = f"graph {graph} " + (f"recaptured {len(recaptures)} time{'s' if len(recaptures) != 1 else ''}"
                                    if recaptures else "captured once")
        if fallback is not None:
            head += f", fell back to eager at call {fallback.get('call')}"
        lines.append(head)
        lines.extend(f"  call {c.get('call')}: {c.get('reason')}" for c in rows if c.get("event") != "capture")
    return lines


def why_line(index: Any) -> str | None:
    """``3 recompiles, 1 graph break: airctl why`` when the run had any (:mod:`airctl.why`), else None."""
    from airctl.why import summary_line as why_summary
    from airctl.why import why_table

    line = why_summary(why_table(index))
    return None if line.startswith("no ") else line  # hits alone are nothing to look into


def print_summary(result: Any, show_all: bool = False, verbose: bool = False, why: bool = False) -> None:
    """A run's summary; ``why``: the whole ``airctl why`` table (``airctl show``), else its one line."""
    if why:
        from airctl.cli.why import print_why
        from airctl.why import why_table

    index = result.index.to_json()
    backend = index.get("backend") or {}
    model = (index.get("model") or {}).get("path")  # none: an imported run
    err.print(f"[bold]airctl {escape(str(index.get('command') or 'compile'))}[/bold] "
              + (f"{one_line(shareable_path(str(model)))} " if model else "")
              + (f"passes={one_line(shareable_path(str(index['passes'])))} " if index.get("passes") else "")
              + f"mode={escape(index.get('mode'))}"
              + (f" backend={escape(backend['name'])}" if backend.get("name") else "")
              + (f" [dim]({escape(backend.get('reason', ''))})[/dim]" if backend.get("reason") else ""))
    for graph in index.get("graphs", []):
        out.print(stage_table(graph, show_all, measured=index.get("command") != "import"))
    dumps = index.get("dumps") or []
    if dumps:
        kinds = sorted({f"{d.get('stage')}.{d.get('type')}" for d in dumps})
        out.print(f"TorchAir dumps: {len(dumps)} ({escape(', '.join(kinds))})")
    execution = index.get("execution")
    if execution:
        if execution["matches_eager"] and execution.get("races"):  # sim computed them in order; a device may not
            out.print(f"execution check: [yellow]matches eager on sim, with stream races[/yellow] (max abs error "
                      f"{execution['max_abs_error']:.3g}, {execution.get('outputs', execution.get('graphs_checked'))} "
                      f"{'outputs' if 'outputs' in execution else 'graphs'}; a device may differ)")
        elif execution["matches_eager"]:
            out.print(f"execution check: [green]matches eager[/green] (max abs error {execution['max_abs_error']:.3g}, "
                      f"{execution.get('outputs', execution.get('graphs_checked'))} "
                      f"{'outputs' if 'outputs' in execution else 'graphs'})")
        else:
            out.print(f"execution check: [red]MISMATCH[/red] (max abs error {execution['max_abs_error']:.3g})")
    # findings and races, as every command that runs the model prints them
    print_verdicts(index, verbose=verbose, ledger_dir=getattr(result, "ledger_dir", None))
    kept = index.get("torchair_warnings") or {}
    if kept.get("count"):  # the warnings themselves are in index.json (airctl compile -v prints them)
        kinds = ", ".join(f"{k} ×{n}" for k, n in list((kept.get("by_kind") or {}).items())[:2])
        more = len(kept.get("by_kind") or {}) - 2
        out.print(f"TorchAir warnings: {kept['count']} kept in index.json torchair_warnings ({escape(kinds)}"
                  + (f", {more} more kinds" if more > 0 else "") + "); -v shows them")
    for line in capture_lines(index.get("captures") or []):
        out.print(escape(line), highlight=False)
    if getattr(result, "ledger_dir", None) is not None:  # streams and events the captures hold (rule R16)
        from airctl.verify.run_checks import ledger_budget_line

        if (budget := ledger_budget_line(result.ledger_dir)) is not None:
            out.print(escape(budget), highlight=False)
    if why:
        print_why(why_table(result.index))
    elif (line := why_line(result.index)) is not None:
        out.print(escape(line), highlight=False)
    timings = index.get("timings") or {}
    if timings:
        parts = [f"{k.removesuffix('_seconds')} {seconds(v)}" for k, v in timings.items() if v is not None]
        out.print("timings: " + ", ".join(parts))
    status = index.get("status")
    colour = "green" if status in ("ok", "planned") else "red"
    out.print(f"status: [{colour}]{escape(status)}[/{colour}]")
    if index.get("report"):
        from pathlib import Path

        report = shareable_path(Path(str(result.ledger_dir)) / index["report"])
        out.print(f"report: {one_line(report)} (open in a browser)")
    out.print(f"ledger: {one_line(shareable_path(result.ledger_dir))}")

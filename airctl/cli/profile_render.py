"""What ``airctl profile`` prints on the terminal: the per-stream summary, a comparison, ranks, races.

Split from :mod:`airctl.cli.profile` (which parses and calls the pipeline) so that each stays small;
rich and the profile's formatters are imported when something is drawn, never at ``--help``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airctl.io.paths import shareable
from airctl.ledger_files import is_ledger

PATH_ROWS = 12  # critical-path rows shown; the rest are in summary.json


def _t(seconds: float | None) -> str:
    from airctl.profile.timeline_svg import format_time

    return "-" if seconds is None else format_time(seconds)


def render_summary(summary: Any, top: int = 10, printed: Any = ()) -> None:
    from rich.table import Table

    from airctl.cli.output import err, escape, out

    for note in dict.fromkeys(n for n in summary.meta.get("notes") or [] if n not in printed):  # once each
        err.print(f"[dim]note: {escape(note)}[/dim]")
    table = Table(title="streams (median step)", title_justify="left")
    for col in ("stream", "busy", "idle", "busy %", "ops", "longest gap"):
        table.add_column(col, justify="left" if col == "stream" else "right")
    for s in summary.streams:
        comm = " [dim](communication)[/dim]" if s.comm_ops and s.comm_ops == s.ops else ""
        table.add_row(escape(s.stream) + comm, _t(s.busy_s), _t(s.idle_s), f"{s.busy_pct:.1f}", str(s.ops),
                      _t(s.largest_gap_s))
    out.print(table)
    share = f" ({100 * summary.overlap_s / summary.span_s:.1f}% of the span)" if summary.span_s else ""
    out.print(f"overlap: [bold]{_t(summary.overlap_s)}[/bold]{share}   op span: {_t(summary.span_s)}"
              f"   step time (median of {len(summary.step_seconds)}): {_t(summary.step_s)}")
    busy = [s for s in summary.streams if s.ops]
    if len(busy) > 1 and not summary.overlap_s and summary.meta.get("model"):  # a plan of scopes, not a capture
        out.print("[dim]no overlap: stream scopes do not reorder nodes, so a side stream runs beside the default "
                  "stream only while the default stream has other work before the wait on it; move independent "
                  "work between the scope and that wait[/dim]")
    path = summary.critical_path
    model_dir = str(Path(summary.meta["model"]).resolve().parent) if summary.meta.get("model") else None
    steps = ", ".join(f"{g.graph} step {g.step}" for g in summary.graphs if g.step is not None)
    from airctl.graph.model import is_stream_op

    sync = sum(1 for p in path if is_stream_op(p.op))
    out.print(f"\n[bold]critical path[/bold] ({escape(steps)}, the median step): {_t(summary.critical_path_s)} "
              f"of work in {len(path) - sync} ops" + (f" (and {sync} record/wait/scope markers)" if sync else ""))
    for p in path[:PATH_ROWS]:
        via = f"[red]{escape(p.via)}[/red]" if p.via.startswith("sync") else f"[dim]{escape(p.via)}[/dim]"
        took = _t(p.dur_s) if p.work_s or not p.dur_s else f"[dim]{_t(p.dur_s)} sync[/dim]"  # a wait's is blocking
        out.print(f"  {escape(p.node)}  [dim]{escape(p.op)}[/dim]  stream {escape(p.stream)}  {took}  "
                  f"{via}  {escape(shareable(p.source or '', model_dir=model_dir))}")
    if len(path) > PATH_ROWS:
        out.print(f"  … {len(path) - PATH_ROWS} more (summary.json)")
    if summary.top_ops:
        ops = Table(title=f"top ops (per step, top {top})", title_justify="left")
        for col in ("op", "calls", "total", "mean", "share"):
            ops.add_column(col, justify="left" if col == "op" else "right")
        for o in summary.top_ops:
            ops.add_row(escape(o.op), str(o.count), _t(o.total_s), _t(o.mean_s), f"{100 * o.share:.1f}%")
        out.print(ops)
    if summary.npu:
        render_npu_steps(summary.npu)
    _render_races(summary.races, model_dir)
    _render_findings(summary.meta.get("ledger"))
    meta = summary.meta
    if meta.get("matches_eager") is not None:
        verdict = ("[red]differs from eager[/red]" if not meta["matches_eager"] else
                   "[yellow]matches eager on sim, with stream races[/yellow]" if summary.races else
                   "[green]matches eager[/green]")
        out.print(f"execution: {verdict} (max abs error {meta.get('max_abs_error') or 0:.3g})")
    if meta.get("links"):
        links = meta["links"]
        out.print(f"linked to graph nodes: {links['linked']} task(s), {links['unlinked']} not linked")
    if meta.get("simulated"):
        out.print("[dim]sim: CPU timings (streams are threads), not NPU kernels[/dim]")
    if summary.trace:
        out.print(f"trace: {escape(summary.trace)}  (open in https://ui.perfetto.dev)")
    if meta.get("svg"):
        out.print(f"picture: {escape(meta['png'] if meta.get('png') else meta['svg'])}")
    if meta.get("ledger") and (Path(meta["ledger"]) / "report.html").is_file():
        out.print(f"report: {escape(str(Path(meta['ledger']) / 'report.html'))} (open in a browser)")
    if meta.get("ledger"):
        out.print(f"ledger: {escape(str(meta['ledger']))}")


def _render_findings(ledger: str | None) -> None:
    """The verifier's verdict of the profiled run, as compile and passes apply print it (races: above)."""
    if not ledger or not is_ledger(ledger):
        return
    from airctl.cli.verdicts import print_verdicts
    from airctl.ledger.reader import Ledger

    index = Ledger.open(Path(ledger)).index.to_json()
    print_verdicts({**index, "execution": None}, ledger_dir=Path(ledger))  # a race's hint: what `passes fix` writes


def _render_races(races: list, model_dir: str | None = None) -> None:
    """Each distinct race once (same lines and streams: one race per layer is one race), with a count."""
    from dataclasses import asdict

    from airctl.cli.output import escape, out
    from airctl.cli.verdicts import race_groups

    if not races:
        out.print("races: none")
        return
    out.print(f"[bold red]{len(races)} race(s)[/bold red]")
    for same in race_groups([asdict(r) for r in races]):
        r = same[0]
        count = f" ×{len(same)}" if len(same) > 1 else ""
        out.print(f"  [red]{escape(r['reader'])}[/red]{count} (stream {escape(r['reader_stream'])}, "
                  f"{escape(shareable(r['reader_source'] or '?', model_dir=model_dir))}) reads "
                  f"[red]{escape(r['producer'])}[/red] (stream {escape(r['producer_stream'])}, "
                  f"{escape(shareable(r['producer_source'] or '?', model_dir=model_dir))}) with no ordering")
    out.print("    [cyan]hint:[/cyan] `airctl passes fix` writes the record/wait passes that close them (the "
              "verifier's hint shows them) and checks every mode")


def render_comparison(c: Any) -> None:
    from rich.table import Table

    from airctl.cli.output import escape, out

    a, b = c.without, c.with_passes
    table = Table(title=f"without vs with {escape(Path(c.passes_file).name if c.passes_file else 'passes')} "
                        "(each side's median round; the verdict below weighs every round)", title_justify="left")
    for col in ("", "without", "with", "change"):
        table.add_column(col, justify="left" if not col else "right")

    def row(label: str, x: float | None, y: float | None) -> None:
        change = "-" if x is None or y is None else (f"{y / x:.2f}×" if x else f"+{_t(y)}")
        table.add_row(label, _t(x), _t(y), change)

    row("step time (median)", a.step_s, b.step_s)
    row("op span", a.span_s, b.span_s)
    row("overlap", a.overlap_s, b.overlap_s)
    row("critical path", a.critical_path_s, b.critical_path_s)
    for s in c.stream_rows():
        row(f"busy: stream {escape(s['stream'])}", s["busy_without_s"], s["busy_with_s"])
    out.print(table)
    verdict = c.verdict  # over every round: a difference only when it exceeds the noise (profile/noise.py)
    rounds = c.to_json()["rounds"]
    out.print(f"step time per round: without {escape(', '.join(_t(x) for x in rounds['without']))}; "
              f"with {escape(', '.join(_t(x) for x in rounds['with']))}")
    style = "bold" if verdict.measurable else "bold dim"
    out.print(f"verdict: [{style}]{escape(verdict.text)}[/{style}]")
    gained = c.overlap_gained_s
    out.print(f"[dim]overlap gained in the median rounds: {'+' if gained >= 0 else '-'}{_t(abs(gained))}[/dim]")
    model = b.meta.get("model")
    _render_races(b.races, str(Path(model).resolve().parent) if model else None)
    for label, s in (("without", a), ("with", b)):
        if s.trace:
            out.print(f"trace ({label}): {escape(s.trace)}")
    if a.meta.get("simulated") or b.meta.get("simulated"):
        out.print("[dim]sim: CPU timings (streams are threads), not NPU kernels[/dim]")


# -- profile analyze: the profiler's step breakdown, several ranks ----------------------------------
def micros(value: float | None) -> str:
    """A time given in µs, as the profile's tables write times (``-`` for none)."""
    return "-" if value is None else _t(value / 1e6)


def render_npu_steps(npu: dict) -> None:
    """Per step: computing, communication, overlapped (hidden under compute), free; and how far they
    are from the profiler's own step_trace_time.csv."""
    from rich.table import Table

    from airctl.cli.output import escape, out

    check = npu.get("check") or {}
    theirs = {row["step"]: row for row in check.get("steps", [])}
    table = Table(title="steps (as step_trace_time.csv defines them)", title_justify="left")
    # computing, communication, overlapped (hidden under compute), not overlapped, free: docs/profile.md
    for col in ("step", "compute", "comm", "overlapped", "comm only", "free", "vs profiler"):
        table.add_column(col, justify="right")
    for s in npu.get("steps", []):
        diffs = [v["diff_pct"] for v in theirs.get(s["step"], {}).values() if isinstance(v, dict)]
        worst = None if not diffs or None in diffs else max(diffs)
        versus = "-" if not diffs else "differs" if worst is None else "< 0.01%" if worst < 0.01 else f"{worst:.2g}%"
        table.add_row(str(s["step"]), micros(s["computing_us"]), micros(s["communication_us"]),
                      micros(s["overlapped_us"]), micros(s["communication_not_overlapped_us"]), micros(s["free_us"]),
                      versus)
    out.print(table)
    streams = npu.get("streams_from") or {}
    out.print(f"[dim]tasks from {escape(str(npu.get('tasks_from')))}; streams: "
              f"{escape('; '.join(f'{k}: {v}' for k, v in streams.items()))}"
              + (f"; checked against {escape(str(check.get('against')))}" if check else "") + "[/dim]")


def render_ranks(multi: Any, top: int = 10) -> None:
    """A folder of several ranks: each rank's summary, then the slowest rank per step and the skew."""
    from rich.table import Table

    from airctl.cli.output import err, escape, out

    for note in multi.meta.get("notes") or []:
        err.print(f"[dim]note: {escape(note)}[/dim]")
    for r in multi.ranks:
        out.rule(f"rank {r.rank}  {escape(str(r.summary.meta.get('folder', '')))}")
        render_summary(r.summary, top)
    cross = multi.cross_rank
    out.rule("across ranks")
    table = Table(title="per step", title_justify="left")
    for col in ("step", "slowest rank", "spread", "collectives", "wait skew", "max skew", "waited for"):
        table.add_column(col, justify="right")
    for s in cross.get("steps", []):
        late = "-" if s.get("late_rank") is None else f"rank {s['late_rank']}"
        table.add_row(str(s["step"]), str(s["slowest_rank"]), micros(s["spread_us"]), str(s["collectives"]),
                      micros(s["wait_skew_us"]), micros(s["max_wait_skew_us"]), late)
    out.print(table)
    late = cross.get("late_rank")
    late_text = "-" if late is None else f"[bold]{escape(late)}[/bold]"  # no step the ranks share: none measured
    out.print(f"slowest rank: [bold]{escape(cross.get('slowest_rank'))}[/bold]   last to arrive at collectives: "
              f"{late_text}   [dim]{escape(str(cross.get('clock', '')))}[/dim]")
    if multi.trace:
        out.print(f"trace: {escape(multi.trace)}  (a process per rank; open in https://ui.perfetto.dev)")

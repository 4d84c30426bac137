"""``airctl profile [SOURCE] --times TIMES``: the predicted profile on the terminal (or as JSON).

Split from :mod:`airctl.cli.profile` (which declares the options): the request comes from
:func:`airctl.pipeline.profile_flows.choose` (a model script's Target, which
:func:`airctl.pipeline.predict.predict` compiles first, as ``compile`` would; or a run, a ledger or a
profiler folder, read as it is); this module calls that function and draws the result. The numbers
are labelled predicted on every line that shows one: they are not measurements.
"""

from __future__ import annotations

from typing import Any

from airctl.cli.output import escape
from airctl.cli.profile_render import micros


def predict_command(req: Any, *, fail_on: Any = None) -> Any:
    """Predict ``req`` (a :class:`~airctl.pipeline.predict.PredictRequest`, which
    :func:`airctl.pipeline.profile_flows.choose` made), and return what to show
    (:class:`~airctl.cli.shown.Shown`)."""
    from airctl.cli.output import err, status
    from airctl.cli.shown import Shown
    from airctl.pipeline import predict as pipeline

    with status("predicting…") as spinner:
        outcome = pipeline.predict(req, progress=lambda msg: spinner.update(msg))
    for note in dict.fromkeys(outcome.notes):
        err.print(f"[dim]note: {escape(note)}[/dim]")

    def view() -> None:
        if outcome.single is not None:
            render_predicted_comparison(outcome)
        else:
            render_predicted(outcome.summary, req.top, printed=outcome.notes)

    return Shown(outcome, view, lambda: _fail_on_race(fail_on, outcome.summary.predicted or {}))


def _fail_on_race(fail_on: Any, predicted: dict) -> None:
    """``--fail-on race|check``: a racy plan exits 1 (its step is not a valid plan's)."""
    if fail_on is None or str(fail_on) not in ("race", "check") or not predicted.get("racy"):
        return
    from airctl.cli.output import err
    from airctl.errors import FindingsExit

    races = predicted.get("races") or []
    first = races[0] if races else {}
    err.print(escape(f"--fail-on {fail_on}: the predicted plan races ({len(races)} error(s); first: "
                     f"{first.get('rule')} at {', '.join(first.get('nodes') or [])[:80]})"), highlight=False)
    raise FindingsExit()


def render_predicted(summary: Any, top: int, printed: Any = ()) -> None:
    """The ordinary profile view of the replay, then what makes it a prediction."""
    from airctl.cli.output import out
    from airctl.cli.profile_render import render_summary

    p = summary.predicted or {}
    kind = "an estimate" if p.get("estimate") else "replayed"
    out.print(f"[bold yellow]predicted NPU profile[/bold yellow] ({kind}; times from {escape(str(p.get('times_from')))}"
              f"; not measured)")
    render_summary(summary, top, printed)  # notes predict_command printed are not said twice
    label = "[bold yellow]predicted[/bold yellow]" + (" [yellow](an estimate)[/yellow]" if p.get("estimate") else "")
    out.print(f"{label} NPU step: [bold]{micros(p.get('step_us'))}[/bold] = ops {micros(p.get('span_us'))} + launch "
              f"{micros(p.get('launch_us'))} per step (assumed; --launch-us)")
    render_validity(p)
    extra = [f"times from {escape(str(p.get('times_from')))}", _device_line(p)]
    if p.get("gap_us"):
        extra.append(f"dispatch gap {p['gap_us']:.2f} µs")
    if p.get("latency_us"):
        extra.append(f"event latency {p['latency_us']:.2f} µs")
    out.print("[dim]" + "; ".join(extra) + "[/dim]")
    if p.get("bandwidth_bound_us") or p.get("core_bound_us"):
        out.print(f"shared: bandwidth-bound {micros(p.get('bandwidth_bound_us'))} "
                  f"({p.get('bandwidth_bound_pct', 0.0):.1f}% of the span), cores oversubscribed "
                  f"{micros(p.get('core_bound_us'))}")
    if p.get("measured_us") is not None:
        out.print(f"measured on the NPU: {micros(p['measured_us'])} (the replay differs by "
                  f"{p.get('error_pct', 0):+.2f}%)")
        for m in p.get("missing") or []:
            out.print(f"[yellow]missing: {escape(m)}[/yellow]")
        if p.get("unexplained_us"):
            out.print(f"[yellow]unexplained: {micros(p['unexplained_us'])} ({p['unexplained_pct']:.1f}% of the "
                      "measured step)[/yellow]")
    if p.get("unmatched"):
        names = ", ".join(escape(n) for n in p.get("unmatched_nodes", [])[:8])
        more = " …" if p["unmatched"] > 8 else ""
        out.print(f"[yellow]unmatched: {p['unmatched']} kernel(s) have no time in the table and take none[/yellow] "
                  f"({names}{more}; all in --json)")
    render_ignored(p)
    render_memory(p.get("memory"))
    out.print("[dim]not measured: replayed from device times (docs/profile.md, Predicted profiles)[/dim]")


def render_memory(mem: dict | None) -> None:
    """``memory: peak …`` (predicted) and the profiler's measured peak beside it (docs/memory.md)."""
    from airctl.cli.output import out

    if not mem:
        return
    if mem.get("peak_bytes") is not None:
        at = mem.get("peak_at") or {}
        where = f" at {escape(str(at.get('node')))}" + (f" ({escape(str(at['source']))})" if at.get("source") else "")
        streams = ", ".join(f"{escape(s)} {_bytes(b)}" for s, b in (mem.get("by_stream") or {}).items())
        out.print(f"predicted device memory ({escape(str(mem.get('rule')))}): peak [bold]{_bytes(mem['peak_bytes'])}"
                  f"[/bold]{where}; inputs {_bytes(mem.get('inputs_bytes'))}, parameters "
                  f"{_bytes(mem.get('params_bytes'))}; per stream: {streams}")
        for u in (mem.get("unbounded") or [])[:3]:
            out.print(f"[yellow]unbounded: {escape(str(u['tensor']))} ({_bytes(u['bytes'])}) read on "
                      f"{escape(str(u['stream']))} is never ordered back: it lives to the graph's end[/yellow]")
    measured = mem.get("measured") or {}
    if measured.get("peak_allocated_bytes") is not None:
        peak, reserved = _bytes(measured["peak_allocated_bytes"]), _bytes(measured.get("peak_reserved_bytes"))
        out.print(f"measured on the NPU (memory_record.csv): peak allocated {peak}, reserved {reserved}")


def _bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def render_validity(p: dict) -> None:
    """``racy: not a valid plan …`` with the race-free step, or ``races: none``: beside every predicted step."""
    from airctl.cli.output import out

    if not p.get("racy"):
        if p.get("measured_us") is None:
            out.print("races: none (the verifier's errors in this mode)")
        return
    races = p.get("races") or []
    first = races[0] if races else {}
    rule, nodes = escape(str(first.get("rule"))), escape(", ".join(first.get("nodes") or [])[:80])
    out.print(f"[bold red]racy: not a valid plan[/bold red] — {len(races)} race(s) (first: {rule} at {nodes}); "
              "the race-free plan would take "
              f"[bold]{micros(p.get('valid_step_us'))}[/bold] (`airctl passes fix` writes its waits)")


def render_ignored(p: dict) -> None:
    from airctl.cli.output import out

    rows = p.get("ignored_rows") or []
    if rows:
        shown = "; ".join(f"{escape(r['row'])} (line {r['line']}: {escape(r['why'])})" for r in rows[:5])
        more = f" … {p.get('ignored_row_count', len(rows)) - 5} more in --json" if len(rows) > 5 else ""
        out.print(f"[yellow]ignored rows: {p.get('ignored_row_count', len(rows))}[/yellow] — {shown}{more}")


def _device_line(p: dict) -> str:
    cond = p.get("conditions") or {}
    if not p.get("device"):
        return "no --device: cores and bandwidth not shared"
    pools = ", ".join(f"{n} {k}" for k, n in (cond.get("pools") or {}).items())
    bw = f", {cond['bandwidth_tb_s']} TB/s" if cond.get("bandwidth_tb_s") else ""
    return f"device {escape(str(p['device']))} ({pools}{bw}; shared)"


def render_predicted_comparison(outcome: Any) -> None:
    from rich.table import Table

    from airctl.cli.output import out

    data = outcome.to_json()
    a, b = outcome.single.predicted or {}, outcome.summary.predicted or {}
    table = Table(title="predicted NPU step: single stream vs the plan (no noise: one replay each)",
                  title_justify="left")
    for col in ("", "single stream", "plan", "change"):
        table.add_column(col, justify="left" if not col else "right")
    table.add_row("step time", micros(a.get("step_us")), micros(b.get("step_us")),
                  _ratio(b.get("step_us"), a.get("step_us")))
    table.add_row("overlap", micros(a.get("overlap_us")), micros(b.get("overlap_us")),
                  f"+{micros(max(data['overlap_gained_us'], 0.0))}")
    table.add_row("critical path", micros(a.get("critical_path_us")), micros(b.get("critical_path_us")),
                  _ratio(b.get("critical_path_us"), a.get("critical_path_us")))
    for stream, busy in (b.get("streams") or {}).items():
        table.add_row(f"busy: {escape(stream)}", micros((a.get("streams") or {}).get(stream, 0.0)), micros(busy), "")
    out.print(table)
    render_validity(b)
    out.print(f"verdict (predicted): {escape(data['mechanism'])}")
    mem = data.get("memory")
    if mem:
        grew = mem.get("grew") or []
        why = (f": {escape(str(grew[0]['tensor']))} on {escape(str(grew[0].get('stream')))} lives until "
               f"{escape(str(grew[0].get('until') or 'the end'))}") if grew else ""
        sign = "+" if mem["delta_bytes"] >= 0 else "-"
        out.print(f"memory (predicted): peak {_bytes(mem['single_stream_peak_bytes'])} → {_bytes(mem['peak_bytes'])} "
                  f"({sign}{_bytes(abs(mem['delta_bytes']))}){why}")
    out.print(f"[dim]times from {escape(str(b.get('times_from')))}; not measured (docs/profile.md)[/dim]")
    if b.get("unmatched"):
        out.print(f"[yellow]unmatched: {b['unmatched']} kernel(s) take no time (listed in --json)[/yellow]")


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}×" if a is not None and b else "-"

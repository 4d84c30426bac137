"""``airctl passes suggest``: propose a race-free stream plan by predicted step (docs/passes.md
"Suggested plans"). Parses options, calls :mod:`airctl.pipeline.suggest`, renders its outcome;
``--json`` prints only JSON on stdout. No torch import at import time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.cli.declare import command, help_text
from airctl.cli.options import TIMES_SOURCES_HELP, entry_option, mode_option, out_option, run_option
from airctl.cli.shown import Shown
from airctl.cli.target import EVERY_MODE, EveryMode
from airctl.modes import Mode

HELP = help_text(
    "Find the regions of MODEL's graph (or a run's) that can run beside each other, assign them to at most --streams "
    "streams with the records and waits they need, and keep the assignment with the shortest predicted step "
    "(device times from --times, as `airctl profile --times`). Writes an ordinary pass file (-o) that `airctl passes "
    "apply` takes; prints the predicted step single-stream, with the run's own plan, and with the suggestion, and why "
    "each region stayed on the main stream. Nothing to overlap: no file, exit 0.",
    "airctl passes suggest fixtures/models/two_chains.py -o two_chains.yaml",
    "airctl passes suggest RUN --times times.csv --streams 3 --json",
)


def register(passes: typer.Typer) -> None:
    @command(passes, "suggest", help=HELP)
    def suggest_cmd(
        source: Path = typer.Argument(None, help="Model script (.py) or run (id or ledger); default: the current run.",
                                      show_default=False),
        times: str = typer.Option("estimate", "--times", help="Device times: " + TIMES_SOURCES_HELP + "."),
        streams: int = typer.Option(2, "--streams", "-k", min=1, help="At most this many streams, the main one "
                                    "included."),
        mode: Mode = mode_option(None, help="TorchAir mode to plan for (default: the run's, else max-autotune).",
                                 show_default=False),
        output: Path = typer.Option(None, "--output", "-o", show_default=False,
                                    help="Where to write the pass file (default suggested-<model>.yaml)."),
        from_file: Path = typer.Option(None, "--from", show_default=False,
                                       help="Improve this pass file: its passes are kept, the suggestion adds scopes "
                                            "(with their records and waits) for what it leaves on the main stream."),
        stage: str = typer.Option("pre", "--stage", help="The hook the passes run in: pre (the graph as AOT gives "
                                  "it) or post (after TorchAir's own FX passes, as passes/comm_stream.yaml)."),
        device: str = typer.Option(None, "--device", show_default=False,
                                   help="Device table for the estimate and core sharing (`airctl profile --help`)."),
        memory_budget: str = typer.Option(None, "--memory-budget", show_default=False,
                                          help="Keep the plan's predicted device memory peak within BYTES (512MiB, "
                                               "2G) or +PCT% over the single-stream plan's (docs/memory.md)."),
        check: bool = typer.Option(True, "--check/--no-check", help="Apply the suggestion and predict it as `airctl "
                                   "profile --times --compare` does before writing it (the step printed is that one)."),
        out: Path = out_option("Folder of ledgers (runs): --runs, as every command whose -o is its own output "
                               "names it; --out too.", "--runs", "--out"),
        run: str = run_option(),
        entry: str = entry_option(),
        every: EveryMode = EVERY_MODE,
    ) -> Shown:
        from airctl.cli.output import status
        from airctl.pipeline.output_claim import claim_run_output
        from airctl.pipeline.source import MODELS, resolve_source
        from airctl.pipeline.suggest import SuggestRequest, suggest

        named = resolve_source(source, run, out_dir=out, accepts=MODELS).path  # never written over: -o is refused
        claim_run_output(output, [named, from_file, Path(times) if Path(times).exists() else None])
        req = SuggestRequest(source=source, run=run, times=times, streams=streams, mode=mode,
                             output=output, from_file=from_file, stage=stage, out_dir=out, every=every,
                             entry=entry, device=device, memory_budget=memory_budget, check=check)
        with status("suggesting a stream plan…") as spinner:
            outcome = suggest(req, progress=lambda msg: spinner.update(msg))
        return Shown(outcome, lambda: render(outcome))


def render(o: Any) -> None:
    from airctl.cli.output import escape, out

    how = "as `airctl profile --times --compare` predicts the applied file" if o.confirmed else "the search's replay"
    out.print(f"graph {escape(o.graph)} ({escape(o.mode)}), times from {escape(str(o.times_from))}: "
              f"predicted device step, one launch of {o.launch_us:.0f} µs included ({how})")
    out.print(f"  single stream   {o.single_step_us:10.1f} µs")
    if o.current_us is not None:
        label = "plan of --from " if o.from_file is not None else "the run's plan "
        out.print(f"  {label} {o.current_us:10.1f} µs")
    out.print(f"  suggested       {o.suggested_step_us:10.1f} µs  ({o.streams} stream(s) at most)")
    gap = max(o.suggested_us - o.lower_bound_us, 0.0)  # never below the bound; -0.0 from rounding
    size = f"{o.candidates} assignments" if o.candidates is not None else "too many assignments for exhaustive"
    out.print(f"  search: kernels {o.suggested_us:.1f} µs on the graph the passes receive (no launch), lower bound "
              f"{o.lower_bound_us:.1f} µs (gap {gap:.1f} µs; {o.method} search, {size}, {o.evaluated} replayed)")
    for m in o.ge_modes:  # GE's automatic streams, priced as the search prices, the launch included as above
        mark = " [green]← faster[/green]" if m["step_us"] < o.suggested_step_us - 0.05 else ""
        out.print(f"  GE {escape(m['spec']):22} {m['step_us']:10.1f} µs  ({m['streams']} streams; --option "
                  f"{escape(m['option'])}){mark}")
    out.print("regions considered:")
    for row in o.regions:
        groups = ", ".join(row["groups"][:3]) + (" …" if len(row["groups"]) > 3 else "")
        if row["stream"]:
            out.print(f"  [green]{escape(row['region'])}[/green] → {row['stream']} ({escape(groups)}): beside "
                      f"{escape(row.get('beside') or 'nothing')}, saves {row.get('saved_us') or 0:.1f} µs")
        else:
            out.print(f"  [dim]{escape(row['region'])}: main stream — {escape(row['why'])}[/dim]")
    if o.memory:
        m = o.memory
        out.print(f"  memory budget ({escape(m['budget'])}): peak {m['peak_bytes']} bytes "
                  f"(single stream {m['single_stream_peak_bytes']}, fastest plan {m['fastest_peak_bytes']}); "
                  + ("within it" if m["within"] else "[yellow]not reachable: even one stream is over it[/yellow]")
                  + (f"; the budget costs {m['cost_us']:.1f} µs a step" if m["cost_us"] > 0.05 else ""))
    for note in o.notes:
        out.print(f"[dim]note: {escape(note)}[/dim]")
    if o.passes_file is None:
        out.print(f"{o.message}: no file written")
    else:
        path = escape(str(o.passes_file))
        from airctl.io.paths import shareable_path

        model = escape(shareable_path(o.model)) if o.model else "MODEL.py"
        out.print(f"wrote {path}: airctl passes apply {path} --model {model} --mode {escape(o.mode)}")

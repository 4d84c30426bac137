"""Bench: two independent matmul chains on two streams vs the same graph on one stream (sim).

Compiles fixtures/models/two_chains.py through TorchAir with passes/two_chains.yaml (the right
chain on stream_1), then, in the same process and alternating run by run, times the compiled
model with the multi-stream executor

- two streams: one thread per stream, 1 intra-op thread each;
- one stream: every node on the calling thread in graph order, 1 intra-op thread (the
  executor's serial mode: same graph, same ops, same sync bookkeeping);
- one stream, 2 intra-op threads: what MKL alone does with both cores, for reference.

It prints min/median per variant, the speedup, how much of the two streams' op time overlapped
in one recorded two-stream step, and an ASCII picture of that step's timeline; the timeline JSON
is written next to the ledger (``--out``).

    .venv/bin/python bench/bench_streams.py [--n 1024] [--depth 10] [--reps 7] [--mode max-autotune]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def busy_intervals(events, stream: str) -> list[tuple[float, float]]:
    spans = sorted((e.start_s, e.end_s) for e in events if e.stream == stream and not e.op.startswith("air."))
    merged: list[list[float]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def overlap(x: list[tuple[float, float]], y: list[tuple[float, float]]) -> float:
    total = 0.0
    for a, b in x:
        for c, d in y:
            total += max(0.0, min(b, d) - max(a, c))
    return total


def ascii_timeline(events, streams: list[str], width: int = 72) -> str:
    ops = [e for e in events if not e.op.startswith("air.")]
    t0 = min(e.start_s for e in ops)
    t1 = max(e.end_s for e in ops)
    scale = width / max(t1 - t0, 1e-9)
    lines = []
    for s in streams:
        row = [" "] * width
        for e in ops:
            if e.stream != s:
                continue
            a = int((e.start_s - t0) * scale)
            b = max(a + 1, int((e.end_s - t0) * scale))
            for k in range(a, min(b, width)):
                row[k] = "#"
        lines.append(f"{s:>9} |{''.join(row)}|")
    lines.append(f"{'':>9}  0 ms{'':>{width - 14}}{(t1 - t0) * 1000:7.1f} ms")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--mode", default="max-autotune", choices=["max-autotune", "reduce-overhead"])
    ap.add_argument("--out", type=Path, default=Path("/tmp/airctl-bench-streams"))
    opts = ap.parse_args()
    os.environ["AIRCTL_TWO_CHAINS_N"] = str(opts.n)
    os.environ["AIRCTL_TWO_CHAINS_DEPTH"] = str(opts.depth)

    from airctl.torch_env import ensure_torch_importable

    ensure_torch_importable()
    import torch

    from airctl.execute.recorder import Recorder
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.pipeline.pass_hooks import build_hooks

    torch.set_num_threads(1)
    variants = {"two streams, 1 thread each": (1, False), "one stream, 1 thread": (1, True),
                "one stream, 2 threads": (2, True)}
    times: dict[str, list[float]] = {k: [] for k in variants}
    recorded: list[Recorder] = []

    def bench(run_once, execution) -> None:
        executors = execution.executors
        for tps, serial in variants.values():  # warm every variant once
            with executors.configure(tps, serial=serial):
                run_once()
        for _ in range(opts.reps):
            for name, (tps, serial) in variants.items():
                with executors.configure(tps, serial=serial):
                    t0 = time.perf_counter()
                    run_once()
                    times[name].append(time.perf_counter() - t0)
        rec = Recorder(keep_events=True)
        with execution.recording(rec), executors.configure(1, serial=False):
            rec.start_step(0)
            run_once()
        recorded.append(rec)

    hooks = build_hooks(REPO / "passes" / "two_chains.yaml")
    result = compile_model(CompileRequest.of(REPO / "fixtures" / "models" / "two_chains.py", mode=opts.mode,
                                          out_dir=opts.out, backend="sim", pre_pass=hooks.pre_pass,
                                          post_pass=hooks.post_pass, report=False, verify=False,
                                          threads_per_stream=1, after_run=bench))
    if result.error is not None:
        print(f"compile failed: {result.error}", file=sys.stderr)
        return 1
    print(f"two_chains: 2 x {opts.depth} mm of {opts.n}x{opts.n} f32, mode {opts.mode}, {opts.reps} runs each, "
          f"alternating; {os.cpu_count()} CPUs")
    print(f"{'variant':<28} {'min ms':>8} {'median ms':>10}")
    for name, ts in times.items():
        print(f"{name:<28} {min(ts) * 1000:8.1f} {statistics.median(ts) * 1000:10.1f}")
    two, one, one2 = (times[k] for k in variants)
    print(f"speedup two streams vs one stream (1 thread): {min(one) / min(two):.2f}x (min), "
          f"{statistics.median(one) / statistics.median(two):.2f}x (median)")
    print(f"two streams vs one stream with 2 intra-op threads: {min(one2) / min(two):.2f}x (min)")
    (tl,) = recorded[0].timelines.values()
    streams = tl.streams()
    a, b = (busy_intervals(tl.events, s) for s in streams[:2])
    both = overlap(a, b)
    busy = [sum(y - x for x, y in iv) for iv in (a, b)]
    print(f"recorded two-stream step: busy {busy[0] * 1000:.1f} ms on {streams[0]}, {busy[1] * 1000:.1f} ms on "
          f"{streams[1]}, {both * 1000:.1f} ms of it concurrent ({both / min(busy) * 100:.0f}% of the shorter)")
    print(ascii_timeline(tl.events, streams))
    out = Path(result.ledger_dir) / "bench_streams_timeline.json"
    out.write_text(json.dumps(tl.to_json(), indent=1), encoding="utf-8")
    print(f"timeline: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: what airctl's capture costs on a compile, at three model sizes, side by side in one run.

    .venv/bin/python bench/bench_compile_overhead.py                  # llama at 3, 13 and 52 layers
    .venv/bin/python bench/bench_compile_overhead.py --layers 3 --repeat 1
    .venv/bin/python bench/bench_compile_overhead.py --capture minimal

For each size of the Llama-style fixture (``fixtures/models/llama.py``; its layer count comes from
``AIRCTL_LLAMA_LAYERS``), alternately:

A = TorchAir's own sim compile + first run: ``torch.compile`` with ``torchair.get_npu_backend``
    inside a sim session, TorchAir's default config (no dumps), the run on the same executor
    airctl uses; the way a user's script runs under sim;
B = ``airctl compile`` of the same model (``compile_model``, the whole command: backend session,
    model load, eager reference, the compile with every stage captured, TorchAir's GE dumps
    (pbtxt, txt, py), the checked run, ``report.html``).

Both run in this one process (TorchAir's GE options are process-wide) after one warm-up of each,
with ``torch._dynamo.reset()`` and then a full garbage collection before each timed run (so neither
starts with the other's compile, or its garbage, left for its own collections to walk), in the order
A B, B A, A B, ... (a drift of the machine over the run weighs on both alike). Printed: FX nodes
(the ``aot-*`` stage), the medians of A and B, the ratio B/A, the ratio for the compile alone (the ledger's
``compile_and_run_seconds``: the same span as A, so without airctl's model load, eager reference
and report), and the ledger's size on disk (all files) per FX node. Medians are of the ratios of
each A/B pair, which cancels much of a shared machine's drift; beside them, the ratio of the
fastest B to the fastest A (a shared machine only adds time: the fastest run is the least
disturbed one).
Targets (issue 14): B/A <= 1.5 at ~400 FX nodes, <= 1.25 at ~6k; ledger <= 2 KB per FX node at ~6k.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS_ENV = "AIRCTL_LLAMA_LAYERS"


@dataclass
class Row:
    layers: int
    fx_nodes: int
    plain: list[float]
    airctl: list[float]
    compile_only: list[float]  # the ledger's compile_and_run_seconds of each B
    ledger_bytes: int

    @property
    def ratio(self) -> float:
        return statistics.median(b / a for a, b in zip(self.plain, self.airctl, strict=True))

    @property
    def fastest_ratio(self) -> float:
        """min(B) / min(A): a shared machine only ever adds time, so each side's fastest run is the
        one least disturbed (printed beside the median of the pairs, not instead of it)."""
        return min(self.airctl) / min(self.plain)

    @property
    def compile_ratio(self) -> float:
        return statistics.median(b / a for a, b in zip(self.plain, self.compile_only, strict=True))


def ledger_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(ROOT / "fixtures/models/llama.py"))
    parser.add_argument("--layers", default="3,13,52", help="comma-separated layer counts (default: 3,13,52)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--capture", default=None, help="airctl's --capture level (default: airctl's default)")
    args = parser.parse_args()
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

    import torch

    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.pipeline.run.execution import RunExecution
    from airctl.pipeline.run.model_script import load_model_script
    from airctl.sim.session import session

    def plain() -> float:
        # TorchAir's own sim compile: the stand-ins, GE graphs run on the executor, no capture hooks
        with session(RunExecution().sim_context()) as torchair:
            loaded = load_model_script(args.model)
            torch._dynamo.reset()
            config = torchair.CompilerConfig()
            gc.collect()
            t0 = time.perf_counter()
            compiled = torch.compile(loaded.model, backend=torchair.get_npu_backend(compiler_config=config),
                                     dynamic=False)
            loaded.call(compiled)
            return time.perf_counter() - t0

    def with_airctl(out: Path) -> tuple[float, float, Path, int]:
        extra = {"capture": args.capture} if args.capture else {}
        # as before A: without this reset, the compile A left in Dynamo's cache (still reachable from
        # the script's module) became garbage only at airctl's own reset, inside the timed span, and
        # B's first full collections walked and freed it (docs/performance.md, "Fourth round")
        torch._dynamo.reset()
        gc.collect()
        t0 = time.perf_counter()
        result = compile_model(CompileRequest(Path(args.model), out_dir=out, backend="sim", **extra))
        seconds = time.perf_counter() - t0
        if result.error:
            sys.exit(f"airctl compile failed: {result.error}")
        aot = next(s for s in result.index.stages() if s.name.startswith("aot-"))
        compile_s = result.index.timings["compile_and_run_seconds"]
        return seconds, compile_s, result.ledger_dir, aot.entry.nodes or 0

    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, layers in enumerate(int(x) for x in args.layers.split(",")):
            os.environ[LAYERS_ENV] = str(layers)
            if i == 0:  # warm-up: imports, first Dynamo use, TorchAir's one-time setup
                plain()
                with_airctl(Path(tmp) / "warmup")
            a, b, c = [], [], []
            size = nodes = 0
            for r in range(args.repeat):
                if r % 2 == 0:  # A then B, then B then A: a drift of the process or host over the
                    a.append(plain())  # run weighs on both sides alike
                seconds, compile_s, ledger, nodes = with_airctl(Path(tmp) / f"{layers}-{r}")
                if r % 2 == 1:
                    a.append(plain())
                b.append(seconds)
                c.append(compile_s)
                size = ledger_bytes(ledger)
            rows.append(Row(layers, nodes, a, b, c, size))
            print(f"[{layers} layers: A {', '.join(f'{x:.2f}' for x in a)}  B {', '.join(f'{x:.2f}' for x in b)}"
                  f"  B compile {', '.join(f'{x:.2f}' for x in c)}]", file=sys.stderr, flush=True)

    print(f"model: {args.model}  repeat: {args.repeat}  capture: {args.capture or 'default'}")
    print("| layers | FX nodes | A TorchAir sim compile | B airctl compile | B/A | fastest B / fastest A "
          "| B compile only / A | ledger | per FX node |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row.layers} | {row.fx_nodes:,} | {statistics.median(row.plain):.2f} s "
              f"| {statistics.median(row.airctl):.2f} s | {row.ratio:.2f}x | {row.fastest_ratio:.2f}x "
              f"| {row.compile_ratio:.2f}x "
              f"| {row.ledger_bytes / 1e6:.2f} MB | {row.ledger_bytes / max(row.fx_nodes, 1) / 1024:.2f} KB |")


if __name__ == "__main__":
    main()

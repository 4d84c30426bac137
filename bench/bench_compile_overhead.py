"""Benchmark: what airctl costs a compile, in fresh processes (as users run it), side by side in one run.

    .venv/bin/python bench/bench_compile_overhead.py                       # 2 and 32 layers, 3 pairs; 80 once
    .venv/bin/python bench/bench_compile_overhead.py --layers 2 --repeat 1 --once ''
    .venv/bin/python bench/bench_compile_overhead.py --capture minimal
    .venv/bin/python bench/bench_compile_overhead.py --warm --layers 3,13,52   # the old one-process mode

A' = A on one roomy block of CPython's frame stack (:mod:`airctl.pipeline.run.frame_stack`), as airctl
    runs every command: B/A is what a user sees against their own TorchAir script, B/A' what airctl's
    capture alone costs (the roomy block spares both sides per-call mappings of frame-stack blocks).

For each size of the Llama-style fixture (``fixtures/models/llama.py``; its layer count comes from
``AIRCTL_LLAMA_LAYERS``), alternately, each in a new process of this venv's Python:

A = a plain script (written to a temporary file) that compiles the model with TorchAir's own backend
    under sim (``torch.compile`` with ``torchair.get_npu_backend`` inside a sim session, TorchAir's
    default config, no dumps) and calls it once: the way a user's script runs under sim;
B = ``python -m airctl compile MODEL --backend sim`` (the whole command: TorchAir's import, model
    load, eager reference, the compile with every stage captured, TorchAir's GE dumps, the checked
    run, ``report.html``, the forked pbtxt child).

Both call the model the same way (``step``/``model(*inputs)``, grad mode as the script leaves it).
Rounds run A A' B, A' B A, B A A', ... (a drift of the machine weighs on both alike). Printed per size: FX
nodes (the ``aot-*`` stage and the largest stage), the compile span of each (A's timed in its
script; B's the ledger's ``compile_and_run_seconds``: the same span, from the first call of the
compiled model to its return) and their ratio, the whole process wall time of each and their ratio,
and the ledger's size. Ratios are medians of the per-pair ratios; beside them the ratio of the
fastest B to the fastest A (a shared machine only adds time). ``--once`` sizes (default 80, the size
users compile) run one pair each, after the others.

``--warm`` keeps the earlier mode: both in this one process after a warm-up of each, which hides
every first-use cost (imports, TorchAir's one-time registrations, thread and process start-up).
Targets (issue 34, fresh processes): B/A compile span <= 1.25x at ~6k FX nodes of the largest stage
and <= 1.3x at ~400; B/A whole process <= 1.4x at ~6k.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS_ENV = "AIRCTL_LLAMA_LAYERS"

# A: what a user's TorchAir script does under sim, and nothing of airctl's capture. The sim
# session is the stand-ins' only way in (TorchAir cannot import without them on a CPU machine).
PLAIN_SCRIPT = '''\
import json, sys, time
from pathlib import Path
import torch
from airctl.backends.sim import SimBackend
from airctl.pipeline.run.execution import RunExecution
from airctl.pipeline.run.model_script import load_model_script

with SimBackend("bench").session(RunExecution(), Path(sys.argv[1])) as torchair:
    loaded = load_model_script(sys.argv[1])
    config = torchair.CompilerConfig()
    compiled = torch.compile(loaded.model, backend=torchair.get_npu_backend(compiler_config=config), dynamic=False)
    t0 = time.perf_counter()
    if sys.argv[2:] == ["roomy"]:  # A': on one roomy frame-stack block, as airctl runs its commands
        from airctl.pipeline.run.frame_stack import call_roomy
        call_roomy(loaded.call, compiled)
    else:
        loaded.call(compiled)
    seconds = time.perf_counter() - t0
print(json.dumps({"compile_and_run_seconds": seconds}))
'''


@dataclass
class Row:
    layers: int
    fx_nodes: int = 0
    largest_stage: int = 0
    ledger_bytes: int = 0
    a_span: list[float] = field(default_factory=list)
    r_span: list[float] = field(default_factory=list)  # A', on airctl's roomy frame stack
    r_wall: list[float] = field(default_factory=list)
    b_span: list[float] = field(default_factory=list)
    a_wall: list[float] = field(default_factory=list)
    b_wall: list[float] = field(default_factory=list)

    @staticmethod
    def _ratio(a: list[float], b: list[float]) -> float:
        return statistics.median(y / x for x, y in zip(a, b, strict=True))

    @property
    def span_ratio(self) -> float:
        return self._ratio(self.a_span, self.b_span)

    @property
    def wall_ratio(self) -> float:
        return self._ratio(self.a_wall, self.b_wall)

    @property
    def roomy_ratios(self) -> tuple[float, float]:
        """B / A' of the span and of the wall: airctl's capture alone (both on one roomy frame-stack block)."""
        return self._ratio(self.r_span, self.b_span), self._ratio(self.r_wall, self.b_wall)

    @property
    def fastest(self) -> tuple[float, float]:
        """min(B) / min(A) of the span and of the wall: a shared machine only ever adds time, so each
        side's fastest run is the one least disturbed (printed beside the medians, not instead)."""
        return min(self.b_span) / min(self.a_span), min(self.b_wall) / min(self.a_wall)


def ledger_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _env(layers: int) -> dict[str, str]:
    # AIRCTL_WARM=0: each B a fresh process (not forked from a warm process its first run started)
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0", AIRCTL_WARM="0")
    env[LAYERS_ENV] = str(layers)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, proc.stdout


def fresh_plain(script: Path, model: str, layers: int, roomy: bool = False) -> tuple[float, float]:
    wall, out = _run([sys.executable, str(script), model, *(["roomy"] if roomy else [])], _env(layers))
    return json.loads(out.strip().splitlines()[-1])["compile_and_run_seconds"], wall


def fresh_airctl(model: str, layers: int, out: Path, capture: str | None) -> tuple[float, float, dict]:
    cmd = [sys.executable, "-m", "airctl", "compile", model, "--backend", "sim", "--out", str(out), "--json"]
    if capture:
        cmd += ["--capture", capture]
    wall, stdout = _run(cmd, _env(layers))
    index = json.loads(stdout)
    if index.get("status") != "ok":
        sys.exit(f"airctl compile: status {index.get('status')}: {index.get('error')}")
    return index["timings"]["compile_and_run_seconds"], wall, index


def measure_fresh(args: argparse.Namespace, tmp: Path, sizes: list[tuple[int, int]]) -> list[Row]:
    script = tmp / "plain_torchair_sim.py"
    script.write_text(PLAIN_SCRIPT)
    rows = []
    for layers, repeat in sizes:
        row = Row(layers)
        for r in range(repeat):
            order = ("A", "A'", "B")[r % 3:] + ("A", "A'", "B")[:r % 3]
            for side in order:
                if side == "A":
                    span, wall = fresh_plain(script, args.model, layers)
                    row.a_span.append(span)
                    row.a_wall.append(wall)
                elif side == "A'":
                    span, wall = fresh_plain(script, args.model, layers, roomy=True)
                    row.r_span.append(span)
                    row.r_wall.append(wall)
                else:
                    out = tmp / f"{layers}-{r}"
                    span, wall, index = fresh_airctl(args.model, layers, out, args.capture)
                    row.b_span.append(span)
                    row.b_wall.append(wall)
                    stages = [s for g in index["graphs"] for s in g["stages"]]
                    row.fx_nodes = next((s["nodes"] or 0 for s in stages if s["name"].startswith("aot-")), 0)
                    row.largest_stage = max((s["nodes"] or 0 for s in stages), default=0)
                    row.ledger_bytes = ledger_bytes(out / index["run_id"])
        print(f"[{layers} layers: A span {_fmt(row.a_span)} wall {_fmt(row.a_wall)}  "
              f"A' span {_fmt(row.r_span)} wall {_fmt(row.r_wall)}  "
              f"B span {_fmt(row.b_span)} wall {_fmt(row.b_wall)}]", file=sys.stderr, flush=True)
        rows.append(row)
    return rows


def _fmt(xs: list[float]) -> str:
    return ", ".join(f"{x:.2f}" for x in xs)


def print_fresh(args: argparse.Namespace, rows: list[Row]) -> None:
    print(f"fresh processes  model: {args.model}  capture: {args.capture or 'default'}  load: "
          f"{os.getloadavg()[0]:.2f}")
    print("| layers | runs | FX nodes (aot) | largest stage | A span | A' span | B span | B/A span | B/A' span "
          "| A wall | A' wall | B wall | B/A wall | B/A' wall | fastest B/A span, wall | ledger |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        fs, fw = row.fastest
        rs, rw = row.roomy_ratios
        print(f"| {row.layers} | {len(row.a_span)} | {row.fx_nodes:,} | {row.largest_stage:,} "
              f"| {statistics.median(row.a_span):.2f} s | {statistics.median(row.r_span):.2f} s "
              f"| {statistics.median(row.b_span):.2f} s | {row.span_ratio:.2f}x | {rs:.2f}x "
              f"| {statistics.median(row.a_wall):.2f} s | {statistics.median(row.r_wall):.2f} s "
              f"| {statistics.median(row.b_wall):.2f} s | {row.wall_ratio:.2f}x | {rw:.2f}x | {fs:.2f}x, {fw:.2f}x "
              f"| {row.ledger_bytes / 1e6:.2f} MB |")


def measure_warm(args: argparse.Namespace, tmp: Path, sizes: list[tuple[int, int]]) -> list[Row]:
    """Both in this process, after a warm-up of each (the mode of issues 14-18): B's span is the
    ledger's compile_and_run_seconds, its wall the whole compile_model call."""
    import torch

    from airctl.backends.sim import SimBackend
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.pipeline.run.execution import RunExecution
    from airctl.pipeline.run.model_script import load_model_script

    def plain() -> float:
        with SimBackend("bench").session(RunExecution(), Path(args.model)) as torchair:
            loaded = load_model_script(args.model)
            torch._dynamo.reset()
            config = torchair.CompilerConfig()
            gc.collect()
            t0 = time.perf_counter()
            compiled = torch.compile(loaded.model, backend=torchair.get_npu_backend(compiler_config=config),
                                     dynamic=False)
            loaded.call(compiled)
            return time.perf_counter() - t0

    def with_airctl(out: Path, row: Row) -> None:
        extra = {"capture": args.capture} if args.capture else {}
        # without this reset, A's compile (still in Dynamo's cache) became garbage inside B's span
        # (docs/performance.md, "Capture overhead")
        torch._dynamo.reset()
        gc.collect()
        t0 = time.perf_counter()
        result = compile_model(CompileRequest.of(Path(args.model), out_dir=out, backend="sim", **extra))
        row.b_wall.append(time.perf_counter() - t0)
        if result.error:
            sys.exit(f"airctl compile failed: {result.error}")
        row.b_span.append(result.index.timings["compile_and_run_seconds"])
        stages = list(result.index.stages())
        row.fx_nodes = next((s.entry.nodes or 0 for s in stages if s.name.startswith("aot-")), 0)
        row.largest_stage = max((s.entry.nodes or 0 for s in stages), default=0)
        row.ledger_bytes = ledger_bytes(result.ledger_dir)

    rows = []
    for i, (layers, repeat) in enumerate(sizes):
        os.environ[LAYERS_ENV] = str(layers)
        if i == 0:  # warm-up: imports, first Dynamo use, TorchAir's one-time setup
            plain()
            with_airctl(tmp / "warmup", Row(layers))
        row = Row(layers)
        for r in range(repeat):
            if r % 2 == 0:
                row.a_span.append(plain())
            with_airctl(tmp / f"{layers}-{r}", row)
            if r % 2 == 1:
                row.a_span.append(plain())
        row.a_wall = list(row.a_span)  # A has nothing outside its span in one process
        rows.append(row)
        print(f"[{layers} layers: A {_fmt(row.a_span)}  B {_fmt(row.b_wall)}  B compile {_fmt(row.b_span)}]",
              file=sys.stderr, flush=True)
    return rows


def print_warm(args: argparse.Namespace, rows: list[Row]) -> None:
    print(f"warm, one process  model: {args.model}  capture: {args.capture or 'default'}")
    print("| layers | FX nodes | A TorchAir sim compile | B airctl compile | B/A | fastest B / fastest A "
          "| B compile only / A | ledger | per FX node |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row.layers} | {row.fx_nodes:,} | {statistics.median(row.a_span):.2f} s "
              f"| {statistics.median(row.b_wall):.2f} s | {row.wall_ratio:.2f}x | {row.fastest[1]:.2f}x "
              f"| {row.span_ratio:.2f}x "
              f"| {row.ledger_bytes / 1e6:.2f} MB | {row.ledger_bytes / max(row.fx_nodes, 1) / 1024:.2f} KB |")


def _counts(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(ROOT / "fixtures/models/llama.py"))
    parser.add_argument("--layers", default="2,32", help="comma-separated layer counts (default: 2,32)")
    parser.add_argument("--repeat", type=int, default=3, help="pairs per --layers size (default: 3)")
    parser.add_argument("--once", default="80",
                        help="layer counts measured by one pair, after the others (default: 80; '' for none)")
    parser.add_argument("--capture", default=None, help="airctl's --capture level (default: airctl's default)")
    parser.add_argument("--warm", action="store_true",
                        help="the old mode: A and B in this process, after a warm-up of each")
    args = parser.parse_args()
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    sizes = [(n, args.repeat) for n in _counts(args.layers)] + [(n, 1) for n in _counts(args.once)]
    with tempfile.TemporaryDirectory() as tmp:
        if args.warm:
            print_warm(args, measure_warm(args, Path(tmp), sizes))
        else:
            print_fresh(args, measure_fresh(args, Path(tmp), sizes))


if __name__ == "__main__":
    main()

"""Benchmark: a YAML edit loop, full against incremental ``passes apply`` (docs/incremental.md).

    .venv/bin/python bench/bench_incremental.py                         # 32 layers, 5 pairs, cold and warm
    .venv/bin/python bench/bench_incremental.py --layers 2 --pairs 2 --how cold
    .venv/bin/python bench/bench_incremental.py --model fixtures/models/transformers/bert.py --layers 0

The Llama-style fixture (``fixtures/models/llama.py``, ``AIRCTL_LLAMA_LAYERS`` layers) or another
model script; a stream scope over its MLPs whose stream name is edited before every apply (the
loop the command serves). One ``passes apply`` first keeps the pre-pass graph; then, alternately,
each in a fresh ``airctl`` process: F = ``passes apply --full`` (Dynamo and AOT traced again),
I = ``passes apply`` (incremental: started from the kept graph). Rounds go F I, I F, F I, ... so a
drift of the machine weighs on both. ``--how warm`` runs both through a warm process of this
benchmark's own (``AIRCTL_WARM_DIR`` in a temporary folder, owned by this process, so it ends with
it; the rounds start once ``airctl doctor`` says it serves); ``cold`` with ``AIRCTL_WARM=0``.
Printed: each run's wall time and whether the ledger says it was incremental, then the medians of F
and I and the median of the per-pair ratios I/F, with the host's load average. Target (issue 61):
I/F <= 0.35 at 32 layers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LLAMA = ROOT / "fixtures" / "models" / "llama.py"
SCOPES = {"llama.py": ("layers.*.mlp", "layers.*"), "bert.py": ("encoder.layer.*.intermediate", "encoder.layer.*")}


def pass_file(path: Path, model: Path, stream: int) -> None:
    select, each = SCOPES.get(model.name, ("layers.*.mlp", "layers.*"))
    path.write_text(f"version: 1\npasses:\n  - name: mlp-side\n    kind: stream_scope\n    stream: '{stream}'\n"
                    f"    select: {{module: {select}}}\n    each: {each}\n", encoding="utf-8")


def apply(model: Path, yaml: Path, out: Path, env: dict[str, str], full: bool) -> tuple[float, str | None]:
    """One ``airctl passes apply`` in a fresh process: its wall time, and the run it started from (None: full)."""
    args = [sys.executable, "-m", "airctl", "passes", "apply", str(yaml), "--model", str(model), "--backend", "sim",
            "--out", str(out), "--json"] + (["--full"] if full else [])
    t0 = time.perf_counter()
    proc = subprocess.run(args, env=env, cwd=out.parent, capture_output=True, text=True, timeout=1800)
    took = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    ledger = json.loads(proc.stdout)["ledger"]
    index = json.loads((Path(ledger) / "index.json").read_text())
    return took, (index.get("incremental") or {}).get("from")


def load() -> str:
    """The host's load averages (1, 5, 15 minutes): the figures mean little without them."""
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def wait_serving(env: dict[str, str], cwd: Path, limit_s: float = 600) -> None:
    """Wait until the benchmark's warm process serves (``airctl doctor --json``): a command started while
    it warms up runs cold, and the first pair would compare a cold full apply with a warm incremental."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        proc = subprocess.run([sys.executable, "-m", "airctl", "doctor", "--json"], env=env, cwd=cwd,
                              capture_output=True, text=True, timeout=120)
        try:
            status = (json.loads(proc.stdout).get("warm") or {}).get("status")
        except ValueError:
            status = None
        if status == "serving":
            return
        time.sleep(5)
    raise SystemExit(f"the warm process did not serve within {limit_s:.0f}s (see {env['AIRCTL_WARM_DIR']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=LLAMA)
    parser.add_argument("--layers", type=int, default=32, help="AIRCTL_LLAMA_LAYERS (the Llama fixture)")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--how", default="cold,warm", help="cold, warm or both (comma-separated)")
    args = parser.parse_args()
    model = args.model.resolve()
    for how in args.how.split(","):
        work = Path(tempfile.mkdtemp(prefix=f"airctl-bench-inc-{how}-"))
        os.chmod(work, 0o700)
        env = {**os.environ, "AIRCTL_LLAMA_LAYERS": str(args.layers), "AIRCTL_WARM": "1" if how == "warm" else "0",
               "AIRCTL_WARM_DIR": str(work), "AIRCTL_WARM_OWNER": str(os.getpid()),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        out, yaml = work / "runs", work / "stream.yaml"
        pass_file(yaml, model, 1)
        first, _ = apply(model, yaml, out, env, full=False)  # keeps the graph (and starts the warm process)
        if how == "warm":
            wait_serving(env, out.parent)  # the warm process warms up in the background: the loop is what it serves
        print(f"[{how}] {model.name} layers={args.layers}: first apply {first:.1f}s (keeps the pre-pass graph); "
              f"load average {load()}", flush=True)
        fulls, incs, ratios = [], [], []
        stream = 1
        for i in range(args.pairs):
            order = (True, False) if i % 2 == 0 else (False, True)
            pair: dict[bool, float] = {}
            for full in order:
                stream += 1
                pass_file(yaml, model, stream)  # the edit
                took, source = apply(model, yaml, out, env, full)
                pair[full] = took
                kind = "full" if full else (f"incremental from {source}" if source else "INCREMENTAL FELL BACK TO FULL")
                print(f"  pair {i + 1}: {took:6.2f}s  {kind}", flush=True)
            fulls.append(pair[True])
            incs.append(pair[False])
            ratios.append(pair[False] / pair[True])
        print(f"[{how}] median full {statistics.median(fulls):.2f}s, incremental {statistics.median(incs):.2f}s, "
              f"incremental/full {statistics.median(ratios):.3f} (per-pair ratios: "
              + ", ".join(f"{r:.3f}" for r in ratios) + f"); load average {load()}", flush=True)


if __name__ == "__main__":
    main()

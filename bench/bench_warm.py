"""Benchmark: the card's loop warm and cold, as users run it, side by side in one run.

    .venv/bin/python bench/bench_warm.py                    # seed and tiny Qwen3, 5 pairs each
    .venv/bin/python bench/bench_warm.py --models seed --repeat 7 --commands compile,apply

For each model (``seed``: fixtures/models/seed.py; ``qwen3``: the tiny transformers Qwen3 of
fixtures/models/transformers/qwen3.py) and each command of the loop (``compile``; ``apply``:
``passes apply`` of passes/stream.yaml (seed) or a stream scope over the MLPs (Qwen3); ``profile
--steps 2``; ``check`` of the latest ledger), alternately cold (``AIRCTL_WARM=0``) and warm, each
a new ``python -m airctl`` process of this venv, timed wall-clock from its start to its exit.
Pairs run cold warm, warm cold, ... (a drift of the machine weighs on both alike). The warm
process lives in a private folder of this bench (``AIRCTL_WARM_DIR``), is started by one untimed
warm command before the pairs (as a user's first command starts it) and is stopped at the end.

Printed per model and command: the median of each side, their ratio (the median of the per-pair
ratios) and the fastest of each. Targets (issue 48): warm <= 0.4x cold for every ledger-writing
command; ``passes apply`` on the tiny Qwen3 <= 3 s on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = {"seed": ROOT / "fixtures" / "models" / "seed.py",
          "qwen3": ROOT / "fixtures" / "models" / "transformers" / "qwen3.py"}


# a pass file each model's graph matches: the seed's stream scope; the Qwen3's MLPs on a side stream
QWEN3_PASSES = ("version: 1\npasses:\n  - name: mlp-side\n    kind: stream_scope\n    stream: '1'\n"
                "    select: {module: model.layers.*.mlp}\n    each: model.layers.*\n")


def command(name: str, model: Path, out: Path) -> list[str]:
    passes = ROOT / "passes" / "stream.yaml"
    if model == MODELS["qwen3"]:
        passes = out.parent / "qwen3_mlp.yaml"
        passes.write_text(QWEN3_PASSES, encoding="utf-8")
    return {"compile": ["compile", str(model), "--backend", "sim", "--out", str(out)],
            "apply": ["passes", "apply", str(passes), "--model", str(model),
                      "--backend", "sim", "--out", str(out)],
            "profile": ["profile", str(model), "--steps", "2", "--backend", "sim", "--out", str(out)],
            "check": ["check", "--out", str(out)]}[name]


def timed(args: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "airctl", *args], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=900)
    took = time.perf_counter() - t0
    if proc.returncode not in (0, 1):  # 1: findings (a check that found something is still a check)
        raise SystemExit(f"airctl {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="seed,qwen3")
    parser.add_argument("--commands", default="compile,apply,profile,check")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="airctl-bw-"))
    os.chmod(folder, 0o700)
    base = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "AIRCTL_WARM_DIR": str(folder), "AIRCTL_WARM_OWNER": str(os.getpid())}
    envs = {"cold": {**base, "AIRCTL_WARM": "0"}, "warm": {**base, "AIRCTL_WARM": "1"}}
    work = Path(tempfile.mkdtemp(prefix="airctl-bench-warm-"))
    try:
        out = work / "runs"
        first = MODELS[args.models.split(",")[0]]
        timed(command("compile", first, out), envs["warm"], work)  # cold: starts the warm process
        state = _serving(folder)
        print(f"warm process: pid {state['pid']}, warm-up {state.get('imports')} s")
        print(f"{'model':7} {'command':8} {'cold s':>7} {'warm s':>7} {'warm/cold':>9} {'fastest c/w':>13}")
        for model_name in args.models.split(","):
            model = MODELS[model_name]
            timed(command("compile", model, out), envs["warm"], work)  # the model's first use (file caches)
            for name in args.commands.split(","):
                times: dict[str, list[float]] = {"cold": [], "warm": []}
                for i in range(args.repeat):
                    for side in (("cold", "warm") if i % 2 == 0 else ("warm", "cold")):
                        times[side].append(timed(command(name, model, out), envs[side], work))
                ratio = statistics.median(w / c for c, w in zip(times["cold"], times["warm"], strict=True))
                print(f"{model_name:7} {name:8} {statistics.median(times['cold']):7.2f} "
                      f"{statistics.median(times['warm']):7.2f} {ratio:9.2f} "
                      f"{min(times['cold']):6.2f}/{min(times['warm']):.2f}", flush=True)
        print(json.dumps({"forked": _serving(folder).get("forked")}))
    finally:
        state = _state(folder)
        if state.get("pid"):
            os.kill(int(state["pid"]), signal.SIGTERM)


def _state(folder: Path) -> dict:
    for path in folder.glob("*.json"):
        try:
            return json.loads(path.read_text())
        except ValueError:
            pass
    return {}


def _serving(folder: Path) -> dict:
    deadline = time.monotonic() + 300
    while _state(folder).get("status") != "serving":
        if time.monotonic() > deadline:
            raise SystemExit(f"the warm process did not start: {_state(folder)}")
        time.sleep(0.1)
    return _state(folder)


if __name__ == "__main__":
    main()

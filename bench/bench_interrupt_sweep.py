"""Benchmark: Ctrl-C at every moment of a compile ends it 130, never 0 (issue 47, acceptance 2).

    .venv/bin/python bench/bench_interrupt_sweep.py [--step 0.05] [--from 0] [--to END] [--model PATH]

One compile of ``fixtures/models/seed.py`` is timed first (END: its wall time plus 0.3 s). Then, for
each moment t = FROM, FROM + STEP, ... up to END, a fresh ``python -m airctl compile`` gets SIGINT
t seconds after it was started, unless it has already exited or is exiting (``waitid(WNOWAIT)``
and ``PF_EXITING`` checked right before the signal: such a process is counted as "ended first"). Prints one
line per outcome with the moments it happened at, and exits 1 if any delivered interrupt ended
with 0 or any code but 130 (Python's own death by SIGINT, -2, is allowed only in the first 50 ms,
before airctl's first instruction). docs/reliability.md has the figures.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.faults.stopped_kill import interrupt_unless_exiting  # noqa: E402

EARLY_S = 0.05  # before this, Python itself may still own SIGINT (its default handler)


def compile_once(model: Path, out: Path, at: float | None) -> tuple[str, float]:
    """One compile, SIGINT at ``at`` seconds; its outcome ("130", "0", "-2", "ended first") and wall time."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "airctl", "compile", str(model), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    delivered = False
    if at is not None:
        time.sleep(max(0.0, start + at - time.monotonic()))
        delivered = interrupt_unless_exiting(proc.pid)  # decided while it is stopped: no check-then-kill race
    code = proc.wait()
    wall = time.monotonic() - start
    return (str(code) if delivered or at is None else "ended first"), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=float, default=0.05)
    parser.add_argument("--from", dest="first", type=float, default=0.0)
    parser.add_argument("--to", type=float, default=None)
    parser.add_argument("--model", type=Path, default=REPO / "fixtures" / "models" / "seed.py")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        outcome, wall = compile_once(args.model, Path(tmp) / "runs", None)
        if outcome != "0":
            sys.exit(f"the compile itself fails ({outcome})")
        end = args.to if args.to is not None else wall + 0.3
        print(f"one compile: {wall:.2f} s; SIGINT every {args.step * 1000:.0f} ms from {args.first:.2f} to {end:.2f} s",
              flush=True)
        seen: dict[str, list[float]] = defaultdict(list)
        bad = []
        latency: list[float] = []  # from the signal to the process's end, delivered interrupts only
        t = args.first
        while t <= end + 1e-9:
            outcome, took = compile_once(args.model, Path(tmp) / "runs", t)
            print(f"  SIGINT at {t:.2f} s: {outcome} ({took:.2f} s)", flush=True)
            seen[outcome].append(t)
            if outcome != "ended first":
                latency.append(took - t)
            if outcome not in ("130", "ended first") and not (outcome == "-2" and t < EARLY_S):
                bad.append((t, outcome))
            t = round(t + args.step, 6)
    for outcome, moments in sorted(seen.items()):
        shown = ", ".join(f"{m:.2f}" for m in moments[:12]) + (" ..." if len(moments) > 12 else "")
        print(f"{outcome:>12}: {len(moments):4d}  at {shown}")
    if latency:
        latency.sort()
        print(f"signal to exit: median {latency[len(latency) // 2]:.2f} s, max {latency[-1]:.2f} s, "
              f"{sum(x > 1.0 for x in latency)} of {len(latency)} over 1 s")
    print(f"delivered interrupts that did not end 130: {len(bad)}" + (f" {bad}" if bad else ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

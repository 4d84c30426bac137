"""Benchmark: Ctrl-C at every moment of a compile ends it 130, never 0 (issue 47, acceptance 2).

    .venv/bin/python bench/bench_interrupt_sweep.py [--step 0.05] [--from 0] [--to END] [--model PATH] [--warm]
    .venv/bin/python bench/bench_interrupt_sweep.py --from-end --from -0.5 --to 0.1 --step 0.003

One compile of ``fixtures/models/seed.py`` is timed first (END: its wall time plus 0.3 s). Then, for
each moment t = FROM, FROM + STEP, ... up to END, a fresh ``python -m airctl compile`` gets SIGINT
t seconds after it was started, unless it has already exited or is exiting (``waitid(WNOWAIT)``
and ``PF_EXITING`` checked right before the signal: such a process is counted as "ended first"). Prints one
line per outcome with the moments it happened at, and exits 1 if any delivered interrupt ended
with 0 or any code but 130 (Python's own death by SIGINT, -2, is allowed only in the first 50 ms,
before airctl's first instruction). ``--from-end``: FROM and TO are seconds from the compile's end,
estimated before each try as the median wall time of the last 5 compiles that ran to their end (on a
shared host a compile's length wanders by seconds, and a fixed window drifts off the end).

Each command's stderr is kept (a file per try); for every outcome
that is not 130 its last lines are printed (a traceback says where the signal landed). Commands run
cold (``AIRCTL_WARM=0``) unless ``--warm``: then the first compile starts a warm process and the
others are served by it. The commands get SIGINT's default action even when this script runs in the
background (where the shell has it ignored, and so would they). docs/reliability.md has the figures.
"""

from __future__ import annotations

import argparse
import os
import signal
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


def compile_once(model: Path, out: Path, at: float | None, warm: bool, err: Path) -> tuple[str, float]:
    """One compile, SIGINT at ``at`` seconds, its stderr to ``err``; its outcome ("130", "0", "-2",
    "ended first") and wall time."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    if not warm:
        env["AIRCTL_WARM"] = "0"
    start = time.monotonic()
    with err.open("wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "airctl", "compile", str(model), "--out", str(out)],
                                stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    delivered = False
    if at is not None:
        try:  # a compile that ends before the moment keeps its own wall time (the estimate of --from-end)
            proc.wait(timeout=max(0.0, start + at - time.monotonic()))
        except subprocess.TimeoutExpired:
            delivered = interrupt_unless_exiting(proc.pid)  # decided while it is stopped: no check-then-kill race
    code = proc.wait()
    wall = time.monotonic() - start
    return (str(code) if delivered or at is None else "ended first"), wall


def tail(path: Path, lines: int = 25) -> str:
    """The last lines of a command's stderr, indented."""
    text = path.read_text(encoding="utf-8", errors="replace").rstrip().splitlines()[-lines:]
    return "\n".join(f"      | {line}" for line in text) or "      | (nothing on stderr)"


def interruptible_children() -> None:
    """Commands started from here get SIGINT's default action, as from a terminal. Started in the
    background (``bench ... &``, ``nohup``), this process ignores SIGINT, its commands inherit that,
    and airctl keeps an ignored signal ignored: every interrupt "ends 0" and nothing is measured."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a handler: reset to the default across exec


def main() -> None:
    interruptible_children()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=float, default=0.05)
    parser.add_argument("--from", dest="first", type=float, default=0.0)
    parser.add_argument("--to", type=float, default=None)
    parser.add_argument("--model", type=Path, default=REPO / "fixtures" / "models" / "seed.py")
    parser.add_argument("--warm", action="store_true", help="let the commands be served by a warm process")
    parser.add_argument("--from-end", action="store_true", help="FROM and TO count from the compile's end")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        err = Path(tmp) / "stderr.txt"
        outcome, wall = compile_once(args.model, Path(tmp) / "runs", None, args.warm, err)
        if outcome != "0":
            sys.exit(f"the compile itself fails ({outcome}):\n{tail(err)}")
        end = args.to if args.to is not None else (0.1 if args.from_end else wall + 0.3)
        whole = [wall]  # the walls of compiles that ran to their end, latest last
        print(f"one compile: {wall:.2f} s; SIGINT every {args.step * 1000:.1f} ms from {args.first:.3f} to "
              f"{end:.3f} s" + (" from the compile's end" if args.from_end else ""), flush=True)
        seen: dict[str, list[float]] = defaultdict(list)
        bad = []
        latency: list[float] = []  # from the signal to the process's end, delivered interrupts only
        t = args.first
        while t <= end + 1e-9:
            at = t + (sorted(whole[-5:])[len(whole[-5:]) // 2] if args.from_end else 0.0)
            err = Path(tmp) / f"stderr-{t:.4f}.txt"
            outcome, took = compile_once(args.model, Path(tmp) / "runs", max(0.0, at), args.warm, err)
            print(f"  SIGINT at {t:.4f} s ({at:.2f} s after start): {outcome} ({took:.2f} s)", flush=True)
            if outcome not in ("130", "ended first"):
                print(tail(err), flush=True)
            seen[outcome].append(t)
            if outcome == "ended first":
                whole.append(took)
            else:
                latency.append(took - at)
            if outcome not in ("130", "ended first") and not (outcome == "-2" and at < EARLY_S):
                bad.append((t, outcome))
            err.unlink()
            t = round(t + args.step, 6)
    for outcome, moments in sorted(seen.items()):
        shown = ", ".join(f"{m:.3f}" for m in moments[:12]) + (" ..." if len(moments) > 12 else "")
        print(f"{outcome:>12}: {len(moments):4d}  at {shown}")
    if latency:
        latency.sort()
        print(f"signal to exit: median {latency[len(latency) // 2]:.2f} s, max {latency[-1]:.2f} s, "
              f"{sum(x > 1.0 for x in latency)} of {len(latency)} over 1 s")
    print(f"delivered interrupts that did not end 130: {len(bad)}" + (f" {bad}" if bad else ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

"""What the README's test command costs: CPU seconds and wall time, for one checkout or two side by side.

The suite is CPU-bound on the 2-core machine, and its wall time moves with whatever else the host
runs; its CPU time moves much less, so that is the figure to compare. The CPU is read for the whole
machine from ``/proc/stat`` (user + nice + system + irq + softirq, every core) before and after: the
suite's warm process outlives the pytest worker that started it, and Chromium and the commands it
forks are not all pytest's children, so ``getrusage`` of the children would miss them. Run it on an
otherwise idle machine (the load average before and after is printed: above ~0.3 the figure counts
other work too).

    .venv/bin/python bench/bench_suite_cpu.py                      # this checkout
    .venv/bin/python bench/bench_suite_cpu.py /tmp/before .        # another checkout, then this one

Each checkout runs the README's command (``.venv/bin/python -m pytest -q -p no:cacheprovider``) with
its own ``.venv`` when it has one, else this one's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
BUSY = (0, 1, 2, 5, 6)  # user, nice, system, irq, softirq: the columns of /proc/stat's "cpu" line


def busy_seconds() -> float:
    with open("/proc/stat", encoding="ascii") as f:
        fields = f.readline().split()[1:]
    return sum(int(fields[i]) for i in BUSY) / TICK


def run_suite(checkout: Path) -> dict[str, float | int | str]:
    python = checkout / ".venv" / "bin" / "python"
    if not python.exists():
        python = Path(sys.executable)
    load_before = os.getloadavg()[0]
    cpu0, wall0 = busy_seconds(), time.monotonic()
    proc = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=checkout,
                          capture_output=True, text=True, env={**os.environ, "AIRCTL_WARM": "0"})
    time.sleep(2)  # the warm process and Chromium the suite started wind down
    cpu, wall = busy_seconds() - cpu0, time.monotonic() - wall0
    lines = proc.stdout.strip().splitlines() or ["(no output)"]
    return {"checkout": str(checkout), "exit": proc.returncode, "cpu_s": round(cpu, 1), "wall_s": round(wall, 1),
            "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2), "result": lines[-1],
            "failed": [ln for ln in lines if ln.startswith(("FAILED ", "ERROR "))]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs="*", type=Path, default=[Path(".")])
    args = parser.parse_args()
    rows = [run_suite(c.resolve()) for c in args.checkouts]
    print(f"{'checkout':40} {'CPU s':>8} {'wall s':>8} {'load before/after':>18}  result")
    for r in rows:
        print(f"{r['checkout']:40} {r['cpu_s']:>8} {r['wall_s']:>8} {r['load_before']:>8}/{r['load_after']:<9}  "
              f"{r['result']} (exit {r['exit']})")
        for line in r["failed"]:  # which tests: a suite that fails under load is a finding of its own
            print(f"  {line}")
    if len(rows) == 2:
        cpu, wall = (float(rows[1][k]) / float(rows[0][k]) for k in ("cpu_s", "wall_s"))
        print(f"second/first: CPU {cpu:.2f}, wall {wall:.2f}")
    return 0 if all(r["exit"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

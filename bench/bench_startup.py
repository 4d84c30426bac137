"""Benchmark: `airctl --help` start-up, against bare Python and `import torch`, side by side.

    .venv/bin/python bench/bench_startup.py [--repeat 7]

Prints the median wall time of each command (subprocesses, warm page cache).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "airctl --help": [sys.executable, "-m", "airctl", "--help"],
    "airctl doctor --json": [sys.executable, "-m", "airctl", "doctor", "--json"],
    "python -c 'import torch'": [sys.executable, "-c", "import torch"],
}


def median_time(cmd: list[str], repeat: int) -> float:
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    results = {name: median_time(cmd, args.repeat) for name, cmd in COMMANDS.items()}
    for name, seconds in results.items():
        print(f"{name:<28} {seconds * 1000:8.1f} ms")
    ratio = results["airctl --help"] / results["python -c 'import torch'"]
    print(f"airctl --help / import torch: {ratio:.2f}")


if __name__ == "__main__":
    main()

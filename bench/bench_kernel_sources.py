"""Benchmark and check: the share of device kernel time that maps to a source line (issue 59), on
the project's profile fixtures that come with a ledger, and how long the mapping takes.

fixtures/profiles/seed_ledger is the seed model's ledger (final FX graph and its GE graph);
npu_two_streams and npu_trace_only are one profiled step of it, read from kernel_details.csv and
from trace_view.json. Each line: the share mapped (target >= 95 %), how much by task name and how
much by kernel type, the kernel time, the unmapped tasks with their reasons, and the wall time of
``airctl show --kernels``' computation (profile read + chains + mapping; median of REPEAT).

    .venv/bin/python bench/bench_kernel_sources.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airctl.pipeline.show import kernels  # noqa: E402

PROFILES = Path(__file__).resolve().parents[1] / "fixtures" / "profiles"
PAIRS = [("seed_ledger", "npu_two_streams"), ("seed_ledger", "npu_trace_only")]
REPEAT = 5


def main() -> int:
    worst = 1.0
    for ledger, folder in PAIRS:
        walls = []
        for _ in range(REPEAT):
            t0 = time.perf_counter()
            table = kernels(PROFILES / ledger, PROFILES / folder)
            walls.append(time.perf_counter() - t0)
        share = table["share"] or 0.0
        worst = min(worst, share)
        by = ", ".join(f"{k} {v:.1f} us" for k, v in table["mapped_by"].items())
        print(f"{folder} with {ledger}: {share:.1%} of {table['kernel_us']:.1f} us of kernel time mapped to a "
              f"source line ({by}; sync tasks apart {table['sync_us']:.1f} us); "
              f"{statistics.median(walls) * 1000:.1f} ms")
        for row in table["unmapped"]:
            print(f"    unmapped {row['task']} x{row['count']} {row['us']:.1f} us: {row['reason']}")
    verdict = "OK" if worst >= 0.95 else "BELOW TARGET"
    print(f"lowest share {worst:.1%}: {verdict} (target >= 95 %)")
    return 0 if worst >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())

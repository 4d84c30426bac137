"""Benchmark: ``write_report`` of this checkout beside another one's (an earlier commit), on one ledger.

The host's speed moves by a third within minutes, so a figure taken an hour ago says little about
a change. This runs both sides on the same synthetic ledger (bench/bench_report.py's: N nodes x 4
stages), in fresh processes that alternate (A B, then B A, ...), each writing the report ``--each``
times, and prints the median and the fastest wall time and parent CPU of each side, with the load
average before and after. The other side is a checkout's folder, e.g. a worktree of the commit before
a change::

    git worktree add /tmp/before <commit>
    .venv/bin/python bench/bench_report_against.py /tmp/before [--nodes 50000] [--rounds 6] [--each 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from bench.bench_report import make_ledger  # noqa: E402

# run in the fresh process: the side's airctl first on the path, then the report written ``each`` times
ONE = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from airctl.report import write_report
out = []
for _ in range(int(sys.argv[3])):
    t, c = time.perf_counter(), time.process_time()
    write_report(Path(sys.argv[2]))
    out.append([time.perf_counter() - t, time.process_time() - c])
print(json.dumps(out))
"""


def side(tree: Path, ledger: Path, each: int) -> list[list[float]]:
    env = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    proc = subprocess.run([sys.executable, "-c", ONE, str(tree), str(ledger), str(each)], capture_output=True,
                          text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: the report failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout's folder (it has airctl/ in it)")
    parser.add_argument("--nodes", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=6, help="pairs of processes")
    parser.add_argument("--each", type=int, default=2, help="reports written by each process")
    args = parser.parse_args()
    if not (args.other / "airctl" / "report").is_dir():
        raise SystemExit(f"{args.other}: not an airctl checkout (no airctl/report/ in it)")
    sides = {"this": HERE, "other": args.other.resolve()}
    runs: dict[str, list[list[float]]] = {name: [] for name in sides}
    print(f"load average {os.getloadavg()[0]:.2f}; {args.nodes} nodes x 4 stages, {args.rounds} rounds")
    with tempfile.TemporaryDirectory() as tmp:
        ledger, _ = make_ledger(args.nodes, Path(tmp) / "runs")
        for k in range(args.rounds):
            order = list(sides) if k % 2 == 0 else list(reversed(sides))
            for name in order:
                runs[name] += side(sides[name], ledger, args.each)
    for name, rows in runs.items():
        walls, cpus = [r[0] for r in rows], [r[1] for r in rows]
        print(f"{name:>5} ({sides[name]}): wall median {statistics.median(walls):.2f} s, fastest {min(walls):.2f} s; "
              f"CPU median {statistics.median(cpus):.2f} s ({len(rows)} reports)")
    ratio = statistics.median(r[0] for r in runs["this"]) / statistics.median(r[0] for r in runs["other"])
    print(f"this / other, wall medians: {ratio:.2f}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

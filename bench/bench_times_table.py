"""Bench: peak memory of reading a TIMES table near its size limit, in fresh processes (issue 63.6).

Writes a CSV of ``--mb`` megabytes (default 60; the limit is 64) with one ``node,us,cores`` row per
node, names like those of a real model (``model_layers_17_self_attn_q_proj_mm_123456``, or short
``--short`` ones: ``mm_123456``, the most rows per megabyte), then reads it with
:func:`airctl.predict.times.read_times_csv` in a fresh Python and prints the peak RSS of that process
(``resource.getrusage(RUSAGE_SELF)``) and of one that only imports the module (the floor).

    .venv/bin/python bench/bench_times_table.py [--mb 60] [--short]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
READ = ("import resource, sys, time; from pathlib import Path; from airctl.predict.times import read_times_csv; "
        "t = time.monotonic(); rows = len(read_times_csv(Path(sys.argv[1])).rows) if sys.argv[1] != '-' else 0; "
        "print(rows, round(time.monotonic() - t, 2), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)")


def write_table(path: Path, mb: int, short: bool) -> None:
    limit = mb * 1024 * 1024
    with path.open("w", encoding="utf-8") as f:
        f.write("node,us,cores\n")
        size, i = 0, 0
        while size < limit:
            name = f"mm_{i}" if short else f"model_layers_{i % 48}_self_attn_q_proj_mm_{i}"
            line = f"{name},{(i % 997) / 10 + 0.5},{i % 24 + 1}\n"
            f.write(line)
            size += len(line)
            i += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=60)
    ap.add_argument("--short", action="store_true", help="short node names: the most rows per MB")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "times.csv"
        write_table(table, args.mb, args.short)
        for what, arg in (("import only", "-"), (f"{args.mb} MB table", str(table))):
            out = subprocess.run([sys.executable, "-c", READ, arg], env=env, capture_output=True, text=True)
            if out.returncode:
                print(what, "failed:", out.stderr[-400:])
                continue
            rows, secs, mb = out.stdout.split()
            print(f"{what:>14}: {int(rows):>9} rows, {float(secs):6.2f} s, peak {int(mb):5} MB")


if __name__ == "__main__":
    main()

"""Bench: ``airctl passes suggest`` on a wide model, peak memory and time in fresh processes (issue 63.2).

fixtures/models/wide.py with ``AIRCTL_WIDE_FORM=plain``: N bare ``Linear`` branches in a
``ModuleList``, each followed by a ReLU in ``forward``, summed — one region per branch. For each N,
fresh processes, each measured by its own peak RSS (``resource.getrusage(RUSAGE_CHILDREN)``
of a child that runs nothing else):

- ``model``: ``airctl passes suggest wide.py`` in the default mode (max-autotune: compile up to the
  passes, then the search; GE's own streams beat the plan, so no file is written or checked);
- ``checked``: the same in ``--mode reduce-overhead``, where the plan wins: the file is written after
  the check (a full ``passes apply`` of it and ``profile --times --compare``) in the same process;
- ``search``: ``airctl passes suggest LEDGER`` on the ledger the first wrote (no torch, the search
  alone).

Target: each ≤ 500 MB whatever N, and the search within its time budget (docs/reliability.md).

    .venv/bin/python bench/bench_suggest_wide.py [--n 50 100 200] [--no-checked]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
AIRCTL = REPO / ".venv" / "bin" / "airctl"
CHILD = ("import resource, subprocess, sys, time; t = time.monotonic(); rc = subprocess.call(sys.argv[1:], "
         "stdout=subprocess.DEVNULL); print(rc, time.monotonic() - t, "
         "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)")


def measured(cmd: list[str], env: dict[str, str]) -> tuple[int, float, float]:
    """(exit, seconds, peak MB) of ``cmd`` run by a fresh child that measures only it."""
    out = subprocess.run([sys.executable, "-c", CHILD, *cmd], env=env, capture_output=True, text=True, check=True)
    rc, secs, mb = out.stdout.split()
    return int(rc), float(secs), float(mb)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[50, 100, 200])
    ap.add_argument("--checked", action=argparse.BooleanOptionalAction, default=True,
                    help="also measure the reduce-overhead run, whose plan is written after its check")
    args = ap.parse_args()
    print(f"{'N':>5} {'what':>7} {'exit':>4} {'s':>7} {'peak MB':>8}  search")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            env = {**os.environ, "AIRCTL_WIDE_FORM": "plain", "AIRCTL_WIDE_N": str(n), "AIRCTL_WARM": "0",
                   "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
            runs = Path(tmp) / f"runs{n}"
            out = Path(tmp) / f"wide{n}.yaml"
            base = [str(AIRCTL), "passes", "suggest", "--out", str(runs), "-o", str(out)]
            rc, secs, mb = measured([*base, str(REPO / "fixtures" / "models" / "wide.py")], env)
            print(f"{n:>5} {'model':>7} {rc:>4} {secs:7.1f} {mb:8.0f}")
            ledger = next(p for p in runs.iterdir() if p.is_dir() and p.name != "latest")
            t = time.monotonic()
            rc, secs, mb = measured([*base, "--json", str(ledger)], env)
            shown = subprocess.run([*base, "--json", str(ledger)], env=env, capture_output=True, text=True)
            search = json.loads(shown.stdout)["search"] if shown.returncode == 0 else shown.stderr[-200:]
            print(f"{n:>5} {'search':>7} {rc:>4} {secs:7.1f} {mb:8.0f}  {search} ({time.monotonic() - t:.0f} s)")
            if args.checked:
                checked = [*base[:-2], "-o", str(Path(tmp) / f"wide{n}-ro.yaml"), "--mode", "reduce-overhead"]
                rc, secs, mb = measured([*checked, str(REPO / "fixtures" / "models" / "wide.py")], env)
                written = (Path(tmp) / f"wide{n}-ro.yaml").is_file()
                print(f"{n:>5} {'checked':>7} {rc:>4} {secs:7.1f} {mb:8.0f}  file written: {written}")


if __name__ == "__main__":
    main()

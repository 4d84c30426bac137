"""Benchmark: a pass file with thousands of passes must cost time linear in their number (issue 18, item 13).

    .venv/bin/python bench/bench_pass_count.py                  # 100, 1000 and 5000 passes
    .venv/bin/python bench/bench_pass_count.py --counts 100,1000 --repeat 1

For each count N, a pass file of N trivial passes (``op_never_timeout`` on a target the model does
not have, ``optional: true``: each is run, skipped, and recorded as its own ledger stage, sharing
the snapshot before it) is applied to ``fixtures/models/seed.py`` the way ``airctl passes apply
FILE --plan`` does (:func:`airctl.pipeline.apply.apply_passes`: build the hooks, compile with every
stage captured up to the end of the passes, the ledger, report.html, one row per pass), in this one
process after a warm-up. Printed: seconds, seconds per pass above the 0-pass run, the ledger's
``index.json`` size, and how many times per pass N costs per pass at the smallest count (1.0 is
linear). Target: 1000 passes in well under 10 s, and the per-pass cost flat from 100 to 5000.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def pass_file(path: Path, count: int) -> Path:
    lines = ["version: 1", "passes:"]
    for i in range(count):
        lines += [f"  - name: p{i}", "    kind: op_never_timeout", "    select: {target: aten.not_in_this_model}",
                  "    optional: true"]
    if not count:
        lines[-1] = "passes: []"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", default="100,1000,5000", help="comma-separated pass counts")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--model", default=str(ROOT / "fixtures/models/seed.py"))
    args = parser.parse_args()
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

    from airctl.pipeline.apply import apply_passes
    from airctl.pipeline.target import Target

    def apply(tmp: Path, count: int, tag: str) -> tuple[float, int]:
        file = pass_file(tmp / f"passes-{count}-{tag}.yaml", count)
        t0 = time.perf_counter()
        target = Target(Path(args.model), backend="sim", passes_file=file)
        result = apply_passes(target, out=tmp / f"runs-{tag}", plan=True)
        seconds = time.perf_counter() - t0
        if result.error is not None or len(result.passes) != count:
            sys.exit(f"{count} passes: {result.status}, {len(result.passes)} rows, {result.error}")
        assert result.ledger_dir is not None
        return seconds, (result.ledger_dir / "index.json").stat().st_size

    counts = [int(x) for x in args.counts.split(",")]
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        apply(tmp, 1, "warmup")  # imports, TorchAir's one-time setup, the first Dynamo compile
        base = statistics.median(apply(tmp, 0, f"base{r}")[0] for r in range(args.repeat))
        rows = []
        for n in counts:
            runs = [apply(tmp, n, f"{n}-{r}") for r in range(args.repeat)]
            seconds = statistics.median(s for s, _ in runs)
            rows.append((n, seconds, (seconds - base) / n, runs[-1][1]))
            print(f"[{n} passes: {', '.join(f'{s:.2f}' for s, _ in runs)} s]", file=sys.stderr, flush=True)

    first = rows[0][2]
    print(f"model: {args.model}  repeat: {args.repeat}  0 passes: {base:.2f} s")
    print("| passes | seconds | ms per pass | index.json | per pass vs the first row |")
    print("|---|---|---|---|---|")
    for n, seconds, per_pass, index_bytes in rows:
        print(f"| {n:,} | {seconds:.2f} | {per_pass * 1e3:.2f} | {index_bytes / 1e6:.2f} MB "
              f"| {per_pass / first:.2f}x |")


if __name__ == "__main__":
    main()

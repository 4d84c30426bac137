"""Benchmark: the cost of airctl's capture on a compile, measured side by side in one process.

    .venv/bin/python bench/bench_compile_overhead.py [--model fixtures/models/transformer.py] [--repeat 3]

A = TorchAir sim compile + first run, no airctl hooks, no dumps (``torch.compile`` with
    ``torchair.get_npu_backend``), the way a user script would do it under sim;
B = ``airctl compile`` of the same model: every stage snapshotted, pbtxt+txt+py dumps, log,
    eager reference run, report.
Both run in the same process (TorchAir's GE options are process-wide), alternating, with
``torch._dynamo.reset()`` before each. Prints the medians and the ratio B/A.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="fixtures/models/transformer.py")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import torch

    from airctl.pipeline.compile import CompileRequest, compile_model
    from airctl.pipeline.execution import RunExecution
    from airctl.pipeline.model_script import load_model_script
    from airctl.sim.session import session

    def plain() -> float:
        # TorchAir's own sim compile: the stand-ins, GE graphs run on the executor, no capture hooks
        with session(RunExecution().sim_context()) as torchair:
            loaded = load_model_script(args.model)
            torch._dynamo.reset()
            config = torchair.CompilerConfig()
            t0 = time.perf_counter()
            compiled = torch.compile(loaded.model, backend=torchair.get_npu_backend(compiler_config=config))
            loaded.call(compiled)
            return time.perf_counter() - t0

    def with_airctl(out: Path) -> float:
        t0 = time.perf_counter()
        result = compile_model(CompileRequest(Path(args.model), out_dir=out, backend="sim"))
        if result.error:
            sys.exit(f"airctl compile failed: {result.error}")
        return time.perf_counter() - t0

    plain()  # warm-up: imports, first Dynamo use
    a, b = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            a.append(plain())
            b.append(with_airctl(Path(tmp)))
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"model: {args.model}")
    print(f"A  TorchAir sim compile + first run, no hooks : {ma:.3f} s  (runs: {', '.join(f'{x:.3f}' for x in a)})")
    print(f"B  airctl compile, all stages + dumps + check : {mb:.3f} s  (runs: {', '.join(f'{x:.3f}' for x in b)})")
    print(f"ratio B/A: {mb / ma:.2f}")


if __name__ == "__main__":
    main()

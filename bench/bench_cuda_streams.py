"""The multi-stream executor on real CUDA streams (``airctl/execute/cuda.py``), on a machine with a GPU.

TorchAir is not needed: where ``torch.ops.air`` lacks TorchAir's stream ops (a CUDA machine has no
torch-npu), they are declared with TorchAir's schemas (``scope_enter(str[] keys, str[] values, bool
need_execute=False)``, ``scope_exit``, ``record() -> Tensor``, ``wait(Tensor[])``): the executor
reads them as roles and never calls them. The graph: two independent chains of ``--depth`` matmuls
of ``--size``², the second inside ``scope_enter(stream_1)`` with a record after it and a wait before
the add that joins them. Printed, per mode: outputs against eager, races the recorder saw, and the
median time of the graph run on two streams against the same graph with the scopes removed (one
stream); then the same graph with the wait left out, which must report a race.

    python bench/bench_cuda_streams.py                 # on a GPU machine (CUDA streams)
    python bench/bench_cuda_streams.py --device cpu    # the same graph on the CPU executor (threads)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402


def declare_air_ops() -> None:
    if hasattr(torch.ops.air, "scope_enter"):
        return
    lib = torch.library.Library("air", "DEF")  # noqa: TID251 - kept alive below
    lib.define("scope_enter(str[] keys, str[] values, bool need_execute=False) -> ()")
    lib.define("scope_exit(bool need_execute=False) -> ()")
    lib.define("record(*, Device? device=None) -> Tensor")
    lib.define("wait(Tensor[] x) -> ()")
    for key in ("BackendSelect", "CPU", "CUDA", "Meta"):
        lib.impl("scope_enter", lambda keys, values, need_execute=False: None, key)
        lib.impl("scope_exit", lambda need_execute=False: None, key)
        lib.impl("record", lambda *, device=None: torch.empty(0, device=device), key)
        lib.impl("wait", lambda x: None, key)
    declare_air_ops.lib = lib  # type: ignore[attr-defined]


def build(depth: int, streams: bool, wait: bool) -> torch.fx.GraphModule:
    air, aten = torch.ops.air, torch.ops.aten
    g = torch.fx.Graph()
    a, b = g.placeholder("a"), g.placeholder("b")
    x = a
    for _ in range(depth):
        x = g.call_function(aten.mm.default, (x, a))
    if streams:
        g.call_function(air.scope_enter.default, (["_user_stream_label"], ["stream_1"]))
    y = b
    for _ in range(depth):
        y = g.call_function(aten.mm.default, (y, b))
    rec = g.call_function(air.record.default, ()) if streams else None
    if streams:
        g.call_function(air.scope_exit.default, ())
        if wait:
            g.call_function(air.wait.default, ([rec],))
    g.output(g.call_function(aten.add.Tensor, (x, y)))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def eager(a: torch.Tensor, b: torch.Tensor, depth: int) -> torch.Tensor:
    x, y = a, b
    for _ in range(depth):
        x, y = x @ a, y @ b
    return x + y


def timed(executor, args, device: str, repeat: int) -> tuple[torch.Tensor, float]:
    out = executor.run(args)  # warm-up
    times = []
    for _ in range(repeat):
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = executor.run(args)
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return out, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    size = args.size or (8192 if args.device == "cuda" else 256)
    declare_air_ops()
    from airctl.execute.cuda import CudaStreamExecutor
    from airctl.execute.executor import StreamExecutor
    from airctl.execute.recorder import Recorder

    kind = CudaStreamExecutor if args.device == "cuda" else StreamExecutor
    torch.manual_seed(0)
    scale = size ** -0.5
    a = (torch.randn(size, size) * scale).to(args.device)
    b = (torch.randn(size, size) * scale).to(args.device)
    reference = eager(a, b, args.depth)
    print(f"device {args.device} ({torch.cuda.get_device_name() if args.device == 'cuda' else 'threads'}), "
          f"torch {torch.__version__}, {kind.__name__}, {args.depth} matmuls of {size}x{size} per chain")
    for mode in ("max-autotune", "reduce-overhead"):
        rec2, rec1, racy = Recorder(), Recorder(), Recorder()
        two = kind(build(args.depth, streams=True, wait=True), mode, "two", recorder=rec2)
        one = kind(build(args.depth, streams=False, wait=False), mode, "one", recorder=rec1)
        out2, t2 = timed(two, [a, b], args.device, args.repeat)
        out1, t1 = timed(one, [a, b], args.device, args.repeat)
        ok2 = torch.allclose(out2, reference, rtol=1e-3, atol=1e-3)
        ok1 = torch.allclose(out1, reference, rtol=1e-3, atol=1e-3)
        print(f"{mode}: two streams {t2 * 1e3:.2f} ms, one stream {t1 * 1e3:.2f} ms ({t1 / t2:.2f}x); "
              f"outputs match eager: {ok2} / {ok1}; races: {len(rec2.race_rows())} / {len(rec1.race_rows())}")
        kind(build(args.depth, streams=True, wait=False), mode, "racy", recorder=racy).run([a, b])
        rows = racy.race_rows()
        print(f"{mode}, wait left out: {len(rows)} race(s)" + (f": {rows[0]['message']}" if rows else ""))
        for ex in (two, one):
            ex.close()


if __name__ == "__main__":
    main()

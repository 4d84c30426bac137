"""Time ``airctl.verify.verify`` on synthetic multi-stream FX graphs of 8k, 40k and 200k nodes.

Not a unit test: prints figures. The graph repeats a two-stream block shaped like the fixture
``ok/two_stream_plan`` (side-stream projections, record/wait both ways, cross-stream reads) over
three streams, so every check (scope walk, vector clocks, cycle test) does real work. Target
(issues 48, 61): 200k nodes in at most 1 s of CPU, and each 5x step close to linear (5x the time).
Each size and mode is timed ``REPEAT`` times in this one process: the median CPU time is the figure
(the wall time beside it: on a shared host it also counts the other processes' turns, several-fold
at a load of 5 on 2 cores), and the load average is printed before and after.

Then the whole command as users run it: the graph written as airctl graph JSON and
``.venv/bin/airctl check FILE`` (max-autotune, the default for a file that names no mode) and
``airctl check FILE --mode reduce-overhead`` run in a fresh process ``RUNS`` times (median wall and CPU,
:mod:`fresh_runs`): Python's start, the CLI's imports, reading the file (50 MB at 200k nodes), the
verifier and the printing. ``check`` of a graph file never goes through the warm process (that
serves commands that import torch), so there is no warm figure.

    .venv/bin/python bench/bench_check.py [N ...] [--runs R]

``--against DIR`` compares this checkout with another one's airctl (a worktree of an earlier commit,
``git worktree add /tmp/before <commit>``) instead: per size and mode, ``verify()`` in a fresh process
of each side, the two sides alternating (``--rounds`` pairs, A B then B A), each the median CPU of
``REPEAT`` calls; then the whole command the same way. Printed: each side's median CPU and the median
of the per-pair ratios (a slow spell of the host then weighs on both sides)::

    .venv/bin/python bench/bench_check.py 200000 --against /tmp/before [--rounds 4] [--runs 1]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airctl.graph.model import Graph, Node  # noqa: E402
from airctl.io.json_io import write_json  # noqa: E402
from airctl.verify import verify  # noqa: E402
from bench.fresh_runs import load, take_flags, whole_command  # noqa: E402


def _op(name: str, op: str, *inputs: str) -> Node:
    return Node(name, op, inputs=list(inputs), attrs={"args": [f"%{i}" for i in inputs]}, kind="call_function")


def _air(name: str, op: str, args: list) -> Node:
    refs = [a[1:] for a in (args[0] if args and isinstance(args[0], list) else []) if isinstance(a, str)
            and a.startswith("%")]
    return Node(name, f"air.{op}.default", inputs=refs if op == "wait" else [], attrs={"args": args},
                kind="call_function")


def synthetic(n_target: int) -> Graph:
    nodes = [Node("x", "placeholder", kind="placeholder"), Node("w", "placeholder", kind="placeholder")]
    h = "x"
    i = 0
    while len(nodes) < n_target - 1:
        s = f"stream_{1 + i % 2}"
        b = f"b{i}"
        nodes += [
            _op(f"{b}_q", "aten.mm.default", h, "w"),
            _air(f"{b}_rh", "record", []),
            _air(f"{b}_enter", "scope_enter", [["_user_stream_label"], [s]]),
            _air(f"{b}_wh", "wait", [[f"%{b}_rh"]]),
            _op(f"{b}_k", "aten.mm.default", h, "w"),
            _op(f"{b}_v", "aten.mm.default", h, "w"),
            _op(f"{b}_kt", "aten.t.default", f"{b}_k"),
            _air(f"{b}_rkv", "record", []),
            _air(f"{b}_exit", "scope_exit", []),
            _op(f"{b}_relu", "aten.relu.default", f"{b}_q"),
            _air(f"{b}_wkv", "wait", [[f"%{b}_rkv"]]),
            _op(f"{b}_s", "aten.mm.default", f"{b}_relu", f"{b}_kt"),
            _op(f"{b}_a", "aten.mm.default", f"{b}_s", f"{b}_v"),
            _op(f"{b}_h", "aten.add.Tensor", h, f"{b}_a"),
        ]
        h = f"{b}_h"
        i += 1
    nodes.append(Node("output", "output", inputs=[h], attrs={"args": [[f"%{h}"]]}, kind="output"))
    return Graph(f"synthetic-{len(nodes)}", "fx", nodes)


REPEAT = 5
RUNS = 5
MODES = ("max-autotune", "reduce-overhead")
HERE = Path(__file__).resolve()

# run in a fresh process of one side: that side's airctl imported first (so this file's imports,
# which put this checkout on the path, find it already loaded), then verify() of the bench's graph
ONE = """
import json, runpy, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import airctl.verify
from airctl.verify import verify
synthetic = runpy.run_path(sys.argv[2])["synthetic"]
assert airctl.verify.__file__.startswith(sys.argv[1]), airctl.verify.__file__
g = synthetic(int(sys.argv[3]))
out = {}
for mode in sys.argv[5:]:
    cpus = []
    for _ in range(int(sys.argv[4])):
        c = time.process_time()
        verify(g, mode)
        cpus.append(time.process_time() - c)
    out[mode] = statistics.median(cpus)
print(json.dumps(out))
"""


def timed(graph: Graph, mode: str, repeat: int = REPEAT) -> tuple[float, float, int]:
    """Median wall and CPU seconds of ``verify(graph, mode)``, and how many findings it gave."""
    walls, cpus = [], []
    findings = []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        findings = verify(graph, mode)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), len(findings)


def verify_cpu(side: str, n: int) -> dict[str, float]:
    """Median CPU seconds of ``verify()`` per mode, in a fresh process of the checkout at ``side``."""
    proc = subprocess.run([sys.executable, "-c", ONE, side, str(HERE), str(n), str(REPEAT), *MODES],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def against(sizes: list[int], other: str, rounds: int, runs: int) -> None:
    """This checkout (A) beside ``other`` (B), alternating pair by pair (see the module docstring)."""
    sides = {"A": str(HERE.parents[1]), "B": str(Path(other).resolve())}
    print(f"{load()}; A = this checkout, B = {sides['B']}; {rounds} pairs; verify(): median of {REPEAT} "
          f"calls per process; whole command: {runs} run(s) per turn")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            cpu: dict[tuple[str, str], list[float]] = {}
            whole: dict[tuple[str, str], list[float]] = {}
            path = Path(tmp) / f"synthetic-{n}.json"
            write_json(synthetic(n), path)
            for k in range(rounds):
                for side in ("AB" if k % 2 == 0 else "BA"):
                    for mode, secs in verify_cpu(sides[side], n).items():
                        cpu.setdefault((side, mode), []).append(secs)
                    for mode in MODES:
                        args = ["check", str(path)] + (["--mode", mode] if mode != "max-autotune" else [])
                        checkout = None if side == "A" else sides["B"]
                        whole.setdefault((side, mode), []).extend(whole_command(args, runs, checkout=checkout).cpus)
            for mode in MODES:
                for what, got in (("verify() CPU", cpu), ("whole `airctl check` CPU", whole)):
                    a, b = got[("A", mode)], got[("B", mode)]
                    ratio = statistics.median(x / y for x, y in zip(a, b, strict=True))
                    print(f"{n:>7} nodes  {mode:<16} {what}: A {statistics.median(a):.3f} s, "
                          f"B {statistics.median(b):.3f} s, A/B {ratio:.2f}")
    print(f"{load()} at the end")


def main() -> None:
    args = sys.argv[1:]
    flags, given = take_flags(args, {"runs": RUNS, "rounds": 3, "against": None})
    runs, rounds, other = int(flags["runs"] or RUNS), int(flags["rounds"] or 3), flags["against"]
    sizes = [int(a) for a in args] or [8_000, 40_000, 200_000]
    if other is not None:
        against(sizes, str(other), rounds, runs if "runs" in given else 1)
        return
    print(f"{load()}; verify() in process: median of {REPEAT}; whole command: median of {runs} fresh processes")
    results, walls = {}, {}
    wholes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            g = synthetic(n)
            for mode in MODES:
                secs, cpu, found = timed(g, mode)
                results[(n, mode)] = cpu  # the CPU time: a busy host inflates the wall time several-fold
                walls[(n, mode)] = secs
                print(f"{len(g):>7} nodes  {mode:<16} verify() {secs * 1000:7.1f} ms  (CPU {cpu * 1000:6.1f} ms, "
                      f"{found} findings)")
            path = Path(tmp) / f"synthetic-{n}.json"
            write_json(g, path)
            del g
            for mode in MODES:
                # max-autotune is what a file that names no mode is checked under: no --mode, as users run it
                args = ["check", str(path)] + (["--mode", mode] if mode != "max-autotune" else [])
                wholes[(n, mode)] = whole_command(args, runs)
                print(f"{'':>7}        {mode:<16} whole command `airctl {' '.join(args[:1] + ['FILE'] + args[2:])}`: "
                      f"{wholes[(n, mode)]}")
    for mode in MODES:
        steps = [f"{results[(b, mode)] / results[(a, mode)]:.2f}" for a, b in zip(sizes, sizes[1:], strict=False)]
        print(f"{mode}: CPU time ratio per step {', '.join(steps)} (sizes {sizes}; linear = their ratio)")
    worst = max(results[(sizes[-1], m)] for m in MODES)
    print(f"{sizes[-1]} verify() worst: {worst:.3f} s CPU ({max(walls[(sizes[-1], m)] for m in MODES):.3f} s wall)  "
          f"{'OK' if worst <= 1.0 else 'OVER BUDGET'} (budget 1 s of CPU)")
    print(f"{sizes[-1]} whole command worst: {max(wholes[(sizes[-1], m)].wall for m in MODES):.2f} s wall, "
          f"{max(wholes[(sizes[-1], m)].cpu for m in MODES):.2f} s CPU")
    print(f"{load()} at the end")


if __name__ == "__main__":
    main()

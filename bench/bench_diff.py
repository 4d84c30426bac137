"""Benchmark: load two N-node graphs from airctl JSON and diff them; says how many edits it found.

Acceptance (issue 13): on graphs shaped like real models (a layer of 8-12 ops with branches, side
streams and per-layer weights, repeated until N nodes; tests/diff/layered.py), the second graph
edited at scattered places (N/2000 edits of each kind: op type changed, stream moved, control
edge inserted, node inserted, node removed), renumbered the way TorchAir numbers ops and put in
another topological order: the diff reports exactly those edits, 50k nodes load + diff take
<= 2 s, and 10k -> 50k grows <= 6x. Loading alone is timed beside it, so the diff's own share
is visible; each figure is the best of ``--repeat`` runs (default 3), measured in a fresh process
(as ``airctl diff A B`` runs: the generator's own objects would slow Python's garbage collector).

The whole command (issue 61: <= 2 s at 50k nodes with 25 edits of each kind) is timed as users run
it: ``.venv/bin/airctl diff A B`` in a fresh process each time, its report printed (to /dev/null),
the median of ``--runs`` runs (default 5), wall and CPU time (:mod:`fresh_runs`); then once more
with ``--json``, whose report is checked against the edits like the in-process one. ``diff`` of
graph files never goes through the warm process, so there is no warm figure.

A second case keeps the older benchmark: random graphs whose nodes all differ, every op renamed,
1% stream moves, an inserted node and a control edge every 500 nodes.

    .venv/bin/python bench/bench_diff.py [N ...] [--repeat R] [--runs W]

``--against DIR`` compares this checkout with another one's airctl (a worktree of an earlier commit,
``git worktree add /tmp/before <commit>``) on the layered case instead: the whole command, and load +
diff in process (best of ``--repeat``), each in a fresh process of each side, the sides alternating
(``--rounds`` pairs, A B then B A); printed: each side's median CPU and the median of the per-pair
ratios, and whether both sides' reports are the same::

    .venv/bin/python bench/bench_diff.py 50000 --against /tmp/before [--rounds 4] [--runs 1]
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airctl.diff import diff_graphs  # noqa: E402
from airctl.graph.model import Graph, Node  # noqa: E402
from airctl.io.json_io import write_json  # noqa: E402
from airctl.io.read import read_graph  # noqa: E402
from bench.fresh_runs import AIRCTL, load, take_flags, whole_command  # noqa: E402
from tests.diff.layered import layers_for, make_case  # noqa: E402

OPS = ("MatMul", "Add", "Mul", "Abs", "Cast", "Transpose", "Reshape", "Sub")


def make_pair(n: int, seed: int = 0) -> tuple[Graph, Graph]:
    """The random case (also used by bench_report.py): every node's neighbourhood is unique."""
    rng = random.Random(seed)
    a_nodes: list[Node] = [Node(f"arg{i}", "Data", attrs={"index": i}) for i in range(8)]
    counts: dict[str, int] = {}
    while len(a_nodes) < n - 1:
        op = rng.choice(OPS)
        k = counts.get(op, 0)
        counts[op] = k + 1
        name = op if k == 0 else f"{op}_{k}"
        window = a_nodes[-40:]
        ins = [f"{rng.choice(window).name}:0" for _ in range(2 if op in ("MatMul", "Add", "Mul", "Sub") else 1)]
        a_nodes.append(Node(name, op, inputs=ins, attrs={"transpose_x1": False} if op == "MatMul" else {}))
    a_nodes.append(Node("NetOutput", "NetOutput", inputs=[f"{a_nodes[-1].name}:0"]))
    a = Graph("a", "ge", a_nodes)

    b_nodes: list[Node] = []
    rename = {nd.name: (f"{nd.name}_x" if nd.op not in ("Data", "NetOutput") else nd.name) for nd in a_nodes}
    for i, nd in enumerate(a_nodes):
        ins = [f"{rename[Node.producer(r)]}:0" for r in nd.inputs]
        new = Node(rename[nd.name], nd.op, inputs=ins, attrs=dict(nd.attrs))
        if i % 100 == 50:
            new.stream = "stream_1"
            new.attrs["_user_stream_label"] = "stream_1"
        if i % 500 == 250 and ins:
            cast = Node(f"InsertedCast_{i}", "Identity", inputs=[ins[0]])
            b_nodes.append(cast)
            new.inputs = [f"{cast.name}:0"] + ins[1:]
            new.control_inputs = [b_nodes[-2].name] if len(b_nodes) > 1 else []
        b_nodes.append(new)
    return a, Graph("b", "ge", b_nodes)


def items(data: dict[str, Any]) -> set[tuple]:
    """What a report (its JSON) says changed, as comparable items (renames and rule counts left out)."""
    out: set[tuple] = {("added", n["name"]) for n in data["added"]} | {("removed", n["name"]) for n in data["removed"]}
    out |= {("changed", c["old_name"], c["name"], repr(c["changes"])) for c in data["changed"]}
    for key in ("edges_added", "edges_removed"):
        out |= {(key, e["src"], e["dst"], e["kind"], k) for k, e in enumerate(sorted(
            data[key], key=lambda e: (e["src"], e["dst"], e["kind"])))}
    return out


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(wall, CPU) seconds of ``fn``, the best of ``repeat`` runs each."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(wall), min(cpu)


def measure_here(pa: Path, pb: Path, repeat: int, out: Path) -> None:
    """In a fresh process (as ``airctl diff A B`` runs): load alone, then load + diff; the report to ``out``."""
    load = best(lambda: (read_graph(pa), read_graph(pb)), repeat)
    both = best(lambda: diff_graphs(read_graph(pa), read_graph(pb)), repeat)
    out.write_text(json.dumps(diff_graphs(read_graph(pa), read_graph(pb)).to_json()), encoding="utf-8")
    print(json.dumps({"load": load, "both": both}))


def measure(a: Graph, b: Graph, tmp: Path, repeat: int) -> tuple[list[float], list[float], dict[str, Any]]:
    """([wall, CPU] of loading alone, [wall, CPU] of load + diff), each the best of ``repeat`` runs in a
    fresh process, and the report's JSON."""
    pa, pb, out = tmp / "a.json", tmp / "b.json", tmp / "report.json"
    write_json(a, pa)
    write_json(b, pb)
    del a, b
    proc = subprocess.run([sys.executable, __file__, "--measure", str(pa), str(pb), str(repeat), str(out)],
                          capture_output=True, text=True, check=True)
    times = json.loads(proc.stdout)
    return times["load"], times["both"], json.loads(out.read_text(encoding="utf-8"))


def whole(pa: Path, pb: Path, runs: int) -> tuple[str, float, float, dict[str, Any]]:
    """``airctl diff A B`` as users run it: (what to print, median wall, median CPU, the ``--json`` report)."""
    plain = whole_command(["diff", str(pa), str(pb)], runs)
    env = dict(os.environ, AIRCTL_WARM="0")
    t0 = time.perf_counter()
    proc = subprocess.run([AIRCTL, "diff", str(pa), str(pb), "--json"], capture_output=True, text=True, env=env,
                          check=True)
    as_json = time.perf_counter() - t0
    return (f"whole command `airctl diff A B`: {plain}; with --json {as_json:.2f} s wall",
            plain.wall, plain.cpu, json.loads(proc.stdout))


# load + diff in a fresh process of one side: that side's airctl imported first, nothing of this checkout
ONE = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import airctl.diff
from airctl.diff import diff_graphs
from airctl.io.read import read_graph
assert airctl.diff.__file__.startswith(sys.argv[1]), airctl.diff.__file__
cpus = []
for _ in range(int(sys.argv[4])):
    c = time.process_time()
    report = diff_graphs(read_graph(sys.argv[2], keep_refs=True), read_graph(sys.argv[3], keep_refs=True))
    cpus.append(time.process_time() - c)
print(json.dumps({"cpu": min(cpus), "report": report.to_json()}, sort_keys=True))
"""


def against(sizes: list[int], other: str, rounds: int, runs: int, repeat: int) -> None:
    """This checkout (A) beside ``other`` (B), alternating pair by pair (see the module docstring)."""
    import statistics

    sides = {"A": str(Path(__file__).resolve().parents[1]), "B": str(Path(other).resolve())}
    print(f"{load()}; A = this checkout, B = {sides['B']}; {rounds} pairs; in process: best of {repeat}; "
          f"whole command: {runs} run(s) per turn")
    with tempfile.TemporaryDirectory() as tmp_:
        pa, pb = Path(tmp_) / "a.json", Path(tmp_) / "b.json"
        for n in sizes:
            case = make_case(layers_for(n, seed=n), max(1, n // 2000), seed=n)
            write_json(case.a, pa)
            write_json(case.b, pb)
            nodes = len(case.a)
            del case
            inproc: dict[str, list[float]] = {"A": [], "B": []}
            whole_cpu: dict[str, list[float]] = {"A": [], "B": []}
            reports: dict[str, str] = {}
            for k in range(rounds):
                for side in ("AB" if k % 2 == 0 else "BA"):
                    proc = subprocess.run([sys.executable, "-c", ONE, sides[side], str(pa), str(pb), str(repeat)],
                                          capture_output=True, text=True, check=True)
                    got = json.loads(proc.stdout)
                    inproc[side].append(got["cpu"])
                    reports[side] = json.dumps(got["report"], sort_keys=True)
                    checkout = None if side == "A" else sides["B"]
                    whole_cpu[side].extend(whole_command(["diff", str(pa), str(pb)], runs, checkout=checkout).cpus)
            for what, got in (("load + diff in process, CPU", inproc), ("whole `airctl diff A B`, CPU", whole_cpu)):
                ratio = statistics.median(x / y for x, y in zip(got["A"], got["B"], strict=True))
                print(f"layered {nodes:>6} nodes  {what}: A {statistics.median(got['A']):.3f} s, "
                      f"B {statistics.median(got['B']):.3f} s, A/B {ratio:.2f}")
            print(f"    reports {'the same' if reports['A'] == reports['B'] else 'DIFFER'} on both sides")
    print(f"{load()} at the end")


def figures(load: list[float], both: list[float]) -> str:
    return (f"load {load[0]:.2f} s, load + diff {both[0]:.2f} s (diff {both[0] - load[0]:.2f} s); "
            f"CPU: load {load[1]:.2f} s, load + diff {both[1]:.2f} s")


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--measure"]:
        measure_here(Path(args[1]), Path(args[2]), int(args[3]), Path(args[4]))
        return
    flags, given = take_flags(args, {"repeat": 3, "runs": 5, "rounds": 3, "against": None})
    repeat, runs, rounds, other = int(flags["repeat"] or 3), int(flags["runs"] or 5), int(flags["rounds"] or 3), \
        flags["against"]
    sizes = [int(x) for x in args] or [10_000, 50_000]
    if other is not None:
        against(sizes, str(other), rounds, runs if "runs" in given else 1, repeat if "repeat" in given else 1)
        return
    print(f"{load()}; in-process: best of {repeat} runs, each size in a fresh process; whole command: "
          f"median of {runs} fresh processes")
    totals: dict[int, list[float]] = {}
    wholes: dict[int, tuple[float, float]] = {}
    exact = True
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        for n in sizes:
            case = make_case(layers_for(n, seed=n), max(1, n // 2000), seed=n)
            want, made, nodes = items(case.expected().to_json()), case.made, len(case.a)
            load_, both, report = measure(case.a, case.b, tmp, repeat)
            del case
            totals[n] = both
            said, wall, cpu, whole_report = whole(tmp / "a.json", tmp / "b.json", runs)
            wholes[n] = (wall, cpu)
            kinds = ", ".join(f"{v} {kind}" for kind, v in made.items())
            print(f"layered {nodes:>6} nodes: {figures(load_, both)}\n    {said}\n    edits made: {kinds}")
            for where, got in (("in-process", items(report)), ("whole command --json", items(whole_report))):
                found, extra = len(want & got), len(got - want)
                exact = exact and found == len(want) and not extra
                print(f"    {where}: report items found {found}/{len(want)}, extra {extra}")
        for n in sizes:
            load_, both, report = measure(*make_pair(n), tmp, 1)
            print(f"random  {n:>6} nodes: {figures(load_, both)}\n    {report['summary']}")
    if len(sizes) >= 2:
        lo, hi = sizes[0], sizes[-1]
        for k, what in ((0, "wall"), (1, "CPU")):
            growth = totals[hi][k] / totals[lo][k]
            print(f"growth {lo}->{hi} nodes (x{hi / lo:.0f}), {what}: load + diff x{growth:.1f} "
                  f"({'OK' if growth <= 6 else 'OVER'}, target <= 6x)")
    if 50_000 in totals:
        wall, cpu = totals[50_000]
        print(f"50k load + diff in-process {wall:.2f} s wall, {cpu:.2f} s CPU")
        wall, cpu = wholes[50_000]
        print(f"50k whole command {wall:.2f} s wall (median), {cpu:.2f} s CPU: {'OK' if wall <= 2 else 'OVER'} "
              "(target <= 2 s)")
    print(f"exact on every layered size, in-process and whole command: {'yes' if exact else 'NO'}")
    print(f"{load()} at the end")


if __name__ == "__main__":
    main()

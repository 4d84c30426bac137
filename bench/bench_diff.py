"""Benchmark: load two N-node graphs from airctl JSON and diff them (target: 50k nodes in <= 3 s).

The second graph is the first with every op renumbered (``Add_7`` -> ``Add_8``), 1% of the nodes
moved to another stream, and a record/wait-style control edge plus an inserted ``Identity`` every 500
nodes, so the matcher has to work by structure, not names. Prints load and diff seconds for
10k and 50k nodes and the 50k/10k ratio (linear growth: ~5x).

    .venv/bin/python bench/bench_diff.py [N ...]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from airctl.diff import diff_graphs
from airctl.graph.model import Graph, Node
from airctl.io.json_io import write_json
from airctl.io.read import read_graph

OPS = ("MatMul", "Add", "Mul", "Abs", "Cast", "Transpose", "Reshape", "Sub")


def make_pair(n: int, seed: int = 0) -> tuple[Graph, Graph]:
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


def run(n: int, tmp: Path) -> tuple[float, float, dict[str, int]]:
    a, b = make_pair(n)
    pa, pb = tmp / f"a{n}.json", tmp / f"b{n}.json"
    write_json(a, pa)
    write_json(b, pb)
    t0 = time.perf_counter()
    ga, gb = read_graph(pa), read_graph(pb)
    t1 = time.perf_counter()
    report = diff_graphs(ga, gb)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, report.summary()


def main() -> None:
    sizes = [int(x) for x in sys.argv[1:]] or [10_000, 50_000]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            load, diff, summary = run(n, Path(tmp))
            results[n] = load + diff
            print(f"{n:>7} nodes: load {load:.2f} s  diff {diff:.2f} s  total {load + diff:.2f} s  {summary}")
    if len(sizes) >= 2:
        lo, hi = sizes[0], sizes[-1]
        print(f"growth {lo}->{hi} nodes (x{hi / lo:.0f}): time x{results[hi] / results[lo]:.1f}")
    if 50_000 in results:
        print(f"50k total {results[50_000]:.2f} s: {'OK' if results[50_000] <= 3 else 'OVER'} (target <= 3 s)")


if __name__ == "__main__":
    main()

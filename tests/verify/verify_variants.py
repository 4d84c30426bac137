"""Graphs that take the verifier's other paths, and its findings on them kept as a golden file.

:mod:`tests.verify.random_graphs` mixes in-place ops into almost every graph, so the happens-before
walk mostly takes its in-place path there. These variants of the same random graphs take the others:
no in-place op (the reads-only path), repeated node names (a name stands for its latest node walked),
no scope markers (the streams the reader gave), and long multi-stream chains shaped like
``bench/bench_check.py``'s graph with some waits left out (races, streams not joined, many at once).
``golden_variants.json`` holds, per variant, seed and mode, how many findings of each rule and a digest
of them all as JSON (order, nodes, messages, hints, sources), as the verifier found them before its
index-based stamps and the walk that also finds backward references.

    .venv/bin/python -m tests.verify.verify_variants   # rewrite the golden file (only with a reason)
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from airctl.graph.model import Graph, Node
from tests.verify.random_graphs import MODES, digest, random_fx_graph

SEEDS = 60
GOLDEN = Path(__file__).with_name("golden_variants.json")
_NOT_IN_PLACE = {"aten.add_.Tensor": "aten.add.Tensor", "aten.copy_.default": "aten.mul.Tensor"}


def no_inplace(seed: int) -> Graph:
    g = random_fx_graph(seed)
    for node in g.nodes:
        node.op = _NOT_IN_PLACE.get(node.op, node.op)
    return g


def repeated_names(seed: int) -> Graph:
    """Every seventh node takes the name of the node four before it (the odd seeds keep in-place ops)."""
    g = no_inplace(seed) if seed % 2 == 0 else random_fx_graph(seed)
    for i in range(7, len(g.nodes), 7):
        if g.nodes[i].kind != "output":
            g.nodes[i].name = g.nodes[i - 4].name
    g.invalidate()
    return g


def no_scopes(seed: int) -> Graph:
    g = no_inplace(seed)
    g.nodes = [n for n in g.nodes if ".scope_" not in n.op]
    g.invalidate()
    return g


def chains(seed: int) -> Graph:
    """Blocks of side-stream work joined back by record/wait (bench_check's shape), some waits missing,
    an in-place add now and then, the output reading the last block or not."""
    rng = random.Random(seed)
    nodes = [Node("x", "placeholder", kind="placeholder"), Node("w", "placeholder", kind="placeholder")]

    def op(name: str, target: str, *ins: str) -> None:
        nodes.append(Node(name, target, inputs=list(ins), attrs={"args": [f"%{i}" for i in ins]},
                          kind="call_function"))

    def air(name: str, what: str, args: list, ins: tuple[str, ...] = ()) -> None:
        nodes.append(Node(name, f"air.{what}.default", inputs=list(ins), attrs={"args": args}, kind="call_function"))

    h = "x"
    for i in range(rng.randint(10, 40)):
        b, s = f"b{i}", f"stream_{1 + rng.randrange(3)}"
        op(f"{b}_q", "aten.mm.default", h, "w")
        air(f"{b}_rh", "record", [])
        air(f"{b}_enter", "scope_enter", [["_user_stream_label"], [s]])
        if rng.random() < 0.8:
            air(f"{b}_wh", "wait", [[f"%{b}_rh"]], (f"{b}_rh",))
        op(f"{b}_k", "aten.mm.default", h, "w")
        op(f"{b}_v", "aten.add_.Tensor" if rng.random() < 0.1 else "aten.mm.default", h, "w")
        op(f"{b}_kt", "aten.t.default", f"{b}_k")
        air(f"{b}_rkv", "record", [])
        air(f"{b}_exit", "scope_exit", [])
        op(f"{b}_relu", "aten.relu.default", f"{b}_q")
        if rng.random() < 0.8:
            air(f"{b}_wkv", "wait", [[f"%{b}_rkv"]], (f"{b}_rkv",))
        op(f"{b}_s", "aten.mm.default", f"{b}_relu", f"{b}_kt")
        op(f"{b}_a", "aten.mm.default", f"{b}_s", f"{b}_v")
        op(f"{b}_h", "aten.add.Tensor", h, f"{b}_a")
        h = f"{b}_h" if rng.random() < 0.9 else h
    nodes.append(Node("output", "output", inputs=[h], attrs={"args": [[f"%{h}"]]}, kind="output"))
    return Graph(f"chains-{seed}", "fx", nodes)


VARIANTS: dict[str, Callable[[int], Graph]] = {
    "no_inplace": no_inplace, "repeated_names": repeated_names, "no_scopes": no_scopes, "chains": chains,
}


def findings_digest(variant: str, seed: int) -> dict[str, list]:
    """Per mode: how many findings of each rule, and a sha256 of all of them as JSON, in order."""
    from airctl.verify import verify

    return {mode: digest(verify(VARIANTS[variant](seed), mode)) for mode in MODES}


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps({v: {str(s): findings_digest(v, s) for s in range(SEEDS)} for v in VARIANTS},
                                 separators=(",", ":")) + "\n")

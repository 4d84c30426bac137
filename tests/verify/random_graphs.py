"""Random multi-stream FX and GE graphs, and the verifier's findings on them kept as a golden file.

The verifier's fast paths (per-op caches, the vector-clock walk on plain tuples, predecessors
resolved once) must give exactly the findings of the plain code they replaced.
``golden_findings.json`` holds what that plain code found on :func:`random_fx_graph` for seeds
``0..SEEDS-1`` in every mode and on :func:`random_ge_graph`: how many of each rule, and a digest
of the whole list as JSON (order, nodes, messages, hints, sources). The FX graphs mix every
construct a rule reads: scopes (nested, unclosed, unmatched, strings instead of lists, priority
and switch keys), records and waits (on records, plain tensors, unknown names, constants, empty
lists), in-place ops, literal arguments, forward references, both op namespaces.

    .venv/bin/python -m tests.verify.random_graphs   # rewrite the golden file (only with a reason)
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from airctl.graph.model import Graph, Node

SEEDS = 400
MODES = ("max-autotune", "reduce-overhead", "npugraph_ex")
GOLDEN = Path(__file__).with_name("golden_findings.json")

_OPS = ("aten.mm.default", "aten.add.Tensor", "aten.mul.Tensor", "aten.relu.default", "aten.t.default",
        "aten.add_.Tensor", "aten.copy_.default", "getitem", "air.wait_tensor.default",
        "air.tagged_event_record.default", "air.tagged_event_wait.default", "air.record_tagged_stream_.default",
        "npugraph_ex.tagged_event_wait.default", "prims.convert_element_type.default", "aten.__iand__.Tensor")
_LABELS = ("stream_1", "stream_2", "Stream1", "s", "stream-2")


def _scope_args(rng: random.Random) -> list:
    label = rng.choice(_LABELS)
    kind = rng.random()
    if kind < 0.55:
        return [["_user_stream_label"], [label]]
    if kind < 0.62:
        return ["_user_stream_label", label]  # strings: zipped letter by letter (R5)
    if kind < 0.70:
        return [["_user_stream_priority", "_user_stream_label"], [rng.choice(["1", "x"]), label]]
    if kind < 0.76:
        return [["_user_stream_label", "_enable_inner_parallel"], [label, rng.choice(["True", "true"])]]
    if kind < 0.80:
        return [["_user_stream_label"], [label, "extra"]]
    if kind < 0.84:
        return [["_user_stream_label"], [3]]
    if kind < 0.92:
        return [["_op_exec_never_timeout"], ["True"]]  # an attribute-only scope
    return [["_user_stream_label"], label]  # values a string: the label is its first letter


def random_fx_graph(seed: int) -> Graph:
    """An FX graph of 20-120 nodes; streams set as a reader would (the innermost label), mostly."""
    rng = random.Random(seed)
    ns = "npugraph_ex" if rng.random() < 0.15 else "air"
    nodes: list[Node] = []
    values: list[str] = []  # nodes giving a tensor
    records: list[str] = []
    stack: list[str | None] = []
    for i in range(rng.randint(1, 3)):
        kind = "get_attr" if i == 2 else "placeholder"
        nodes.append(Node(f"arg{i}", kind, kind=kind))
        values.append(f"arg{i}")
    for i in range(rng.randint(20, 120)):
        stream = next((s for s in reversed(stack) if s is not None), None)
        pick = rng.random()
        name = f"n{i}"
        if pick < 0.08:
            args = _scope_args(rng)
            label = args[1][0] if isinstance(args[1], list) and args[1] and isinstance(args[1][0], str) \
                and "_user_stream_label" in args[0] else None
            nodes.append(Node(name, f"{ns}.scope_enter.default", attrs={"args": args}, kind="call_function",
                              stream=stream))
            stack.append(label)
        elif pick < 0.15:
            nodes.append(Node(name, f"{ns}.scope_exit.default", attrs={"args": []}, kind="call_function",
                              stream=stream))
            if stack and rng.random() < 0.95:
                stack.pop()
        elif pick < 0.23:
            nodes.append(Node(name, f"{ns}.record.default", attrs={"args": []}, kind="call_function", stream=stream))
            records.append(name)
        elif pick < 0.32:
            shape = rng.random()
            pool = records if records and shape < 0.75 else values
            targets = rng.sample(pool, k=min(len(pool), rng.randint(1, 2)))
            items: object = [f"%{t}" for t in targets]
            if shape > 0.97:
                items = []
            elif shape > 0.94:
                items = [*items, 7]
            elif shape > 0.91:
                items = [*items, "%nowhere"]
            elif shape > 0.89:
                items = "%" + targets[0]
            if rng.random() < 0.05:
                nodes.append(Node(name, f"{ns}.wait.default", inputs=targets, kind="call_function", stream=stream))
            else:
                nodes.append(Node(name, f"{ns}.wait.default", inputs=list(targets), attrs={"args": [items]},
                                  kind="call_function", stream=stream))
        else:
            op = rng.choice(_OPS)
            ins = rng.sample(values, k=min(len(values), rng.randint(1, 2)))
            if rng.random() < 0.004:
                ins.append(f"n{i + rng.randint(1, 5)}")  # a forward reference
            args: list = [f"%{x}" for x in ins]
            if rng.random() < 0.2:
                args.append(rng.choice([2, 0.5, [1, 2], True]))
            attrs: dict = {"args": args}
            if rng.random() < 0.1:
                attrs["kwargs"] = rng.choice([{"alpha": 2}, {"dtype": 6}, {}])
            if rng.random() < 0.05:
                attrs[rng.choice(["_user_stream_priority", "_enable_inner_parallel"])] = rng.choice(["x", False, "3"])
            node = Node(name, op, inputs=ins, attrs=attrs, kind="call_function", stream=stream,
                        source=f"model.py:{i}" if rng.random() < 0.3 else None,
                        control_inputs=[values[0]] if rng.random() < 0.003 else [])
            nodes.append(node)
            values.append(name)
    if rng.random() < 0.9:
        outs = rng.sample(values, k=min(len(values), 2))
        nodes.append(Node("output", "output", inputs=outs, attrs={"args": [[f"%{x}" for x in outs]]}, kind="output"))
    return Graph(f"random-{seed}", "fx", nodes)


def random_ge_graph(seed: int) -> Graph:
    """A GE graph of 20-120 ops: data and control edges (some unknown, some backward: cycles), streams,
    Consts with control inputs, zipped one-letter scope attributes, an output or none."""
    rng = random.Random(seed)
    nodes = [Node(f"data{i}", "Data", attrs={"index": i}) for i in range(rng.randint(1, 3))]
    count = rng.randint(20, 120)
    for i in range(count):
        ins = [f"{rng.choice(nodes).name}:{rng.randint(0, 1)}" for _ in range(rng.randint(0, 2))]
        if rng.random() < 0.01:
            ins.append(f"op{i + rng.randint(0, 5)}:0")  # backward in node order: may close a cycle
        ctrl = [rng.choice(["^", ""]) + rng.choice(nodes).name for _ in range(rng.random() < 0.15)]
        if rng.random() < 0.02:
            ctrl.append("^nowhere")
        attrs: dict = {}
        if rng.random() < 0.05:
            attrs.update({"_": "s", "u": "t", "s": "r"})
        if rng.random() < 0.05:
            attrs["_user_stream_priority"] = rng.choice(["1", "x"])
        stream = rng.choice([None, None, "stream_1", "Stream1", "s"]) if rng.random() < 0.5 else None
        op = rng.choice(["MatMul", "Add", "Const", "Cast", "Identity"])
        nodes.append(Node(f"op{i}", op, inputs=ins, control_inputs=ctrl, attrs=attrs, stream=stream))
    if rng.random() < 0.9:
        nodes.append(Node("out", "NetOutput", inputs=[f"op{count - 1}:0", f"op{count // 2}:0"]))
    return Graph(f"random-ge-{seed}", "ge", nodes)


def findings_digest(seed: int) -> dict[str, list]:
    """Per mode (and ``ge``: :func:`random_ge_graph`): how many findings of each rule, and a sha256 of
    all of them as JSON, in order."""
    from airctl.verify import verify

    return {mode: digest(verify(random_ge_graph(seed), MODES[0]) if mode == "ge"
                         else verify(random_fx_graph(seed), mode)) for mode in (*MODES, "ge")}


def digest(found: list) -> list:
    """Findings as a golden file keeps them: the count per rule, and a digest of every finding's JSON."""
    counts: dict[str, int] = {}
    for f in found:
        counts[f.rule] = counts.get(f.rule, 0) + 1
    text = json.dumps([f.to_json() for f in found], sort_keys=True)
    return [counts, hashlib.sha256(text.encode()).hexdigest()[:20]]


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps({str(s): findings_digest(s) for s in range(SEEDS)}, separators=(",", ":")) + "\n")

"""Structurally identical subgraphs moved between streams (issue 32): identical experts and
repeated layers, converted in another order (so GE renumbers their ops) with a different set of
them on a side stream. The diff must list every moved op as a stream change of *that* op, add
and remove nothing, never list an edge as both added and removed, and list the renames."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airctl.diff import diff_graphs
from airctl.graph.model import Graph, Node

ROLES = ("perm", "Transpose", "MatMulV2", "Relu", "Identity", "Add")  # per expert, in conversion order


def build(experts: int, layers: int, on_stream: set[int], order: list[int], provenance: bool = True
          ) -> tuple[Graph, dict[tuple[int, int, str], str]]:
    """A GE graph of ``layers`` layers of ``experts`` identical experts, the experts of each layer
    converted in ``order``; experts in ``on_stream`` on stream_1. Returns it and identity -> name."""
    counts: Counter[str] = Counter()
    names: dict[tuple[int, int, str], str] = {}

    def name(op: str) -> str:
        k = counts[op]
        counts[op] += 1
        return op if k == 0 else f"{op}_{k}"

    nodes = [Node("x", "Data", attrs={"index": 0})]
    acc = "x:0"
    weights = 0
    for layer in range(layers):
        outs: dict[int, str] = {}
        for e in order:
            weights += 1
            w = Node(f"w{layer}_{e}", "Data", attrs={"index": 1 + layer * experts + e})
            attrs = {"_user_stream_label": "stream_1"} if e in on_stream else {}
            stream = "stream_1" if e in on_stream else None
            made = {}
            for role in ROLES[:-1]:
                op = "Const" if role == "perm" else role
                made[role] = Node(name(op), op, attrs=dict(attrs, **({"value": [1, 0]} if role == "perm" else {})),
                                  stream=stream)
            made["Transpose"].inputs = [f"{w.name}:0", f"{made['perm'].name}:0"]
            made["MatMulV2"].inputs = [acc, f"{made['Transpose'].name}:0"]
            made["Relu"].inputs = [f"{made['MatMulV2'].name}:0"]
            made["Identity"].inputs = [f"{made['Relu'].name}:0"]
            if provenance:
                fx = {"Transpose": "t", "MatMulV2": "mm", "Relu": "relu", "Identity": "detach"}
                for role, base in fx.items():
                    made[role].meta = {"fx_tensor_names": [f"{base}_{layer}_{e}-aten.{base}.OUTPUT.0"]}
            nodes += [w, *made.values()]
            for role, node in made.items():
                names[(layer, e, role)] = node.name
            outs[e] = f"{made['Identity'].name}:0"
        total = outs[0]
        for e in range(1, experts):  # summed in expert order, whatever the conversion order
            add = Node(name("Add"), "Add", inputs=[total, outs[e]])
            if provenance:
                add.meta = {"fx_tensor_names": [f"add_{layer}_{e}-aten.add.OUTPUT.0"]}
            nodes.append(add)
            names[(layer, e, "Add")] = add.name
            total = f"{add.name}:0"
        acc = total
    nodes.append(Node("NetOutput", "NetOutput", inputs=[acc]))
    return Graph(name="g", dialect="ge", nodes=nodes), names


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(experts=st.integers(2, 6), layers=st.integers(1, 3), provenance=st.booleans(), data=st.data())
def test_moved_identical_experts_are_listed_each_as_itself(experts: int, layers: int, provenance: bool,
                                                           data: st.DataObject) -> None:
    subsets = st.sets(st.integers(0, experts - 1), max_size=experts)
    on_a, on_b = data.draw(subsets), data.draw(subsets)
    order_b = data.draw(st.permutations(list(range(experts))))
    a, names_a = build(experts, layers, on_a, list(range(experts)), provenance)
    b, names_b = build(experts, layers, on_b, list(order_b), provenance)
    report = diff_graphs(a, b)

    assert not report.added and not report.removed
    moved = on_a ^ on_b
    expected = {names_b[(layer, e, role)] for layer in range(layers) for e in moved for role in ROLES[:-1]}
    assert {c.name for c in report.changed} == expected
    for c in report.changed:
        assert set(c.changes) <= {"stream", "attrs"}
    assert not report.edges_added and not report.edges_removed
    truth = {(names_a[k], names_b[k]) for k in names_a if names_a[k] != names_b[k]}
    assert set(report.renamed) == truth  # every rename listed, each the right one


def test_two_experts_swapping_the_side_stream_in_the_issues_shape() -> None:
    """Expert e1 off stream_1, e0 onto it, e1 converted first in B: 2 x 5 ops moved, the rest renamed."""
    a, _ = build(2, 1, {1}, [0, 1])
    b, _ = build(2, 1, {0}, [1, 0])
    report = diff_graphs(a, b)
    assert len(report.changed) == 10 and not report.added and not report.removed
    assert report.renamed and not report.edges_added and not report.edges_removed
    assert report.matched_by.get("provenance")

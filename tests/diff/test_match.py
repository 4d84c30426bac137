"""Acceptance 2: the diff of the seed graph before/after the stream pass is exact, whatever the numbering."""

from __future__ import annotations

import copy
import random

from airctl.diff import diff_graphs, match_graphs
from airctl.diff.match import RULES
from airctl.diff.sides import Sides
from airctl.graph.model import Graph, Node
from airctl.io.read import read_graph
from tests.diff.layered import make_case
from tests.io.dumps import DUMPS, FX_AFTER, FX_BEFORE

INSERTED = {"scope_enter_default": "air.scope_enter.default", "record_default": "air.record.default",
            "scope_exit_default": "air.scope_exit.default", "wait_default": "air.wait.default"}


def renumber(graph: Graph, mapping: dict[str, str]) -> Graph:
    """A copy with nodes renamed (inputs, control inputs and FX "%name" args follow)."""
    g = copy.deepcopy(graph)

    def ref(r: str) -> str:
        name = Node.producer(r)
        return r.replace(name, mapping.get(name, name), 1) if name else r

    def args(v):
        if isinstance(v, str) and v.startswith("%"):
            return "%" + mapping.get(v[1:], v[1:])
        if isinstance(v, list):
            return [args(x) for x in v]
        if isinstance(v, dict):
            return {k: args(x) for k, x in v.items()}
        return v

    for n in g.nodes:
        n.name = mapping.get(n.name, n.name)
        n.inputs = [ref(r) for r in n.inputs]
        n.control_inputs = [mapping.get(c, c) for c in n.control_inputs]
        n.attrs = args(n.attrs)
    g.invalidate()
    return g


def test_fx_seed_pass_reports_exactly_the_inserted_nodes_and_edges() -> None:
    report = diff_graphs(read_graph(FX_BEFORE), read_graph(FX_AFTER)).to_json()
    assert {(n["name"], n["op"]) for n in report["added"]} == set(INSERTED.items())
    assert report["removed"] == [] and report["edges_removed"] == []
    assert report["edges_added"] == [{"src": "record_default", "dst": "wait_default", "kind": "sync"}]
    assert {c["name"]: c["changes"] for c in report["changed"]} == {
        "mm": {"stream": {"old": None, "new": "stream_1"}},
        "abs_1": {"stream": {"old": None, "new": "stream_1"}},
    }


def test_fx_seed_diff_survives_renumbering() -> None:
    before = renumber(read_graph(FX_BEFORE), {"mm": "mm_1", "abs_1": "abs_2", "add": "add_3", "sub": "sub_7"})
    after = renumber(read_graph(FX_AFTER), {"sub": "mm", "mm": "sub", "add": "add_1"})  # adversarial: swapped
    report = diff_graphs(before, after).to_json()
    assert {(n["name"], n["op"]) for n in report["added"]} == set(INSERTED.items())
    assert report["removed"] == [] and report["edges_removed"] == []
    assert report["edges_added"] == [{"src": "record_default", "dst": "wait_default", "kind": "sync"}]
    assert {(c["old_name"], c["name"]) for c in report["changed"]} == {("mm_1", "sub"), ("abs_2", "abs_1")}
    assert all(set(c["changes"]) == {"stream"} for c in report["changed"])  # no spurious "%mm" arg changes
    assert {(r["from"], r["to"]) for r in report["renamed"]} == {("mm_1", "sub"), ("add_3", "add_1"),
                                                                 ("sub_7", "mm"), ("abs_2", "abs_1")}


def test_ge_dumps_before_and_after_stream_pass_with_different_numbering() -> None:
    before = read_graph(DUMPS / "plain" / "optimized.pbtxt")
    after = renumber(read_graph(DUMPS / "stream" / "optimized.txt"),
                     {"MatMul": "MatMul_3", "Abs": "Abs_1", "Add": "Add_2", "Sub": "Add", "Const": "Const_9"})
    report = diff_graphs(before, after).to_json()
    assert report["added"] == [] and report["removed"] == []
    assert report["edges_added"] == [{"src": "Abs_1", "dst": "Add", "kind": "control"}]  # Abs -> Sub, renamed
    assert report["edges_removed"] == []
    changed = {c["name"]: c["changes"] for c in report["changed"]}
    assert set(changed) == {"MatMul_3", "Abs_1"}
    assert all(ch["stream"] == {"old": None, "new": "stream_1"} for ch in changed.values())


def test_identical_graphs_match_fully_even_when_shuffled_names() -> None:
    g = read_graph(DUMPS / "stream" / "original.txt")
    names = [n.name for n in g.nodes]
    shuffled = names[:]
    random.Random(3).shuffle(shuffled)
    report = diff_graphs(g, renumber(g, dict(zip(names, shuffled, strict=True))))
    assert report.empty


def _chain(ops: list[str], inputs: dict[str, list[str]] | None = None) -> Graph:
    nodes = [Node("x", "placeholder", kind="placeholder"), Node("y", "placeholder", kind="placeholder")]
    prev = "x"
    for i, op in enumerate(ops):
        name = f"n{i}"
        nodes.append(Node(name, op, inputs=(inputs or {}).get(name, [prev, "y"])))
        prev = name
    nodes.append(Node("output", "output", inputs=[prev], kind="output"))
    return Graph("g", "fx", nodes)


def test_reordered_inputs_are_a_change_not_an_edge_change() -> None:
    a = _chain(["aten.add.Tensor", "aten.mul.Tensor"])
    b = _chain(["aten.add.Tensor", "aten.mul.Tensor"], {"n1": ["y", "n0"]})
    report = diff_graphs(a, b)
    assert not report.added and not report.removed and not report.edges_added and not report.edges_removed
    assert [c.name for c in report.changed] == ["n1"]
    assert "inputs_reordered" in report.changed[0].changes


def test_op_type_change_in_place_is_changed() -> None:
    a = _chain(["aten.add.Tensor", "aten.mul.Tensor", "aten.relu.default"])
    b = _chain(["aten.add.Tensor", "aten.sub.Tensor", "aten.relu.default"])
    report = diff_graphs(a, b)
    assert not report.added and not report.removed
    assert [(c.name, c.changes["op"]) for c in report.changed] == [("n1", {"old": "aten.mul.Tensor",
                                                                           "new": "aten.sub.Tensor"})]


def test_inserted_node_in_a_chain_of_same_ops() -> None:
    a = _chain(["Add"] * 6)
    b = _chain(["Add"] * 3 + ["Cast"] + ["Add"] * 3, {"n4": ["n3", "y"]})
    report = diff_graphs(a, b)
    assert [n.name for n in report.added] == ["n3"]
    assert [n.op for n in report.removed] == []
    assert sorted(report.edges_added) == [("n2", "n3", "data"), ("n3", "n4", "data"), ("y", "n3", "data")]
    assert report.edges_removed == [("n2", "n3", "data")]


def test_matching_reports_how_nodes_were_paired() -> None:
    m = match_graphs(read_graph(FX_BEFORE), read_graph(FX_AFTER))
    assert len(m.a_to_b) == 6 and set(m.how.values()) <= set(RULES)


def test_a_chain_of_diffs_sharing_sides_reports_what_separate_diffs_report() -> None:
    """Stage k's arrays serve its diff with k-1 and with k+1 (:class:`Sides`): the reports are those of
    fresh diffs, including a graph diffed with itself and a chain that comes back to an earlier graph."""
    case, other = make_case(3, 2, 5), make_case(3, 1, 6)
    chain = [case.a, case.b, case.b, other.a, case.a]
    sides = Sides()
    for a, b in zip(chain, chain[1:], strict=False):
        assert diff_graphs(a, b, sides).to_json() == diff_graphs(a, b).to_json()


def test_a_matchings_names_stay_its_own_after_its_sides_serve_the_next_diff() -> None:
    """The matcher's result builds its name maps on first use, from its own pair arrays: a chain of diffs
    (:class:`Sides`) hands the shared side a new array for the next diff, which must not leak back."""
    from collections import Counter

    from airctl.diff.sides import Sides

    case, other = make_case(3, 2, 5), make_case(3, 1, 6)
    sides = Sides()
    first = match_graphs(case.a, case.b, sides)
    match_graphs(case.b, other.a, sides)  # case.b's side is reused, its pair array replaced
    fresh = match_graphs(case.a, case.b)
    assert first.a_to_b == fresh.a_to_b and first.how == fresh.how
    assert first.rule_counts() == dict(Counter(fresh.how.values()))

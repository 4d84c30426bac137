"""Two runs paired stage by stage (:mod:`airctl.diff.runs`), and FX stream ops that moved (:mod:`airctl.diff.places`).

Ledgers written with the one writer, small FX graphs: fast, no compile (tests/cli/test_diff_runs.py
compiles the seed model for real).
"""

from __future__ import annotations

from pathlib import Path

from airctl.diff import diff_graphs
from airctl.diff.runs import diff_runs
from airctl.graph.model import Graph, Node
from airctl.ledger.writer import LedgerWriter


def fx(*ops: str, wait_before: str | None = None) -> Graph:
    """x -> ops[0] -> ops[1] ... -> output, named like FX; with ``wait_before``, a record after the
    first op and its wait before that op."""
    nodes = [Node("x", "placeholder", kind="placeholder")]
    prev = "x"
    for k, op in enumerate(ops):
        if op == wait_before:
            nodes.append(Node("wait", "air.wait.default", inputs=["record"]))
        nodes.append(Node(op, f"aten.{op}.default", inputs=[prev]))
        prev = op
        if wait_before and k == 0:
            nodes.append(Node("record", "air.record.default"))
    nodes.append(Node("output", "output", inputs=[prev], kind="output"))
    return Graph("g", "fx", nodes)


def ledger(out: Path, stages: list[tuple[str, Graph]], passes: str | None = None) -> Path:
    w = LedgerWriter.create(out, "m", command="compile", passes=passes)
    w.graph("1-inference", "inference")
    for name, graph in stages:
        w.add_stage("1-inference", name, graph)
    w.finish()
    return w.root


def test_stages_pair_by_name_in_order_and_only_one_sides_are_listed(tmp_path: Path) -> None:
    plain, other = fx("mm", "abs"), fx("mm", "neg")
    a = ledger(tmp_path, [("dynamo", plain), ("p", plain), ("p", plain), ("fx-final", plain)])
    b = ledger(tmp_path, [("dynamo", plain), ("yaml:x", plain), ("p", plain), ("p", other), ("q", other),
                          ("fx-final", other)], passes="x.yaml")
    runs = diff_runs(a, b)
    (graph,) = runs.graphs
    assert [(s.name, s.status) for s in graph.stages] == [
        ("dynamo", "same"), ("yaml:x", "only_b"), ("p", "same"), ("p", "differs"), ("q", "only_b"),
        ("fx-final", "differs")]
    assert runs.summary() == {"graphs": 1, "stages": 6, "differ": 2, "same": 2, "only_a": 0, "only_b": 2}
    data = runs.to_json()
    assert data["a"]["passes"] is None and data["b"]["passes"] == "x.yaml"
    final = data["graphs"][0]["stages"][-1]["diff"]
    assert [(c["old_op"], c["op"]) for c in final["changed"]] == [("aten.abs.default", "aten.neg.default")]


def test_a_renumbered_stage_is_the_same_and_a_graph_of_one_run_is_listed(tmp_path: Path) -> None:
    g = fx("mm", "abs")
    renamed = Graph("g", "fx", [Node("x", "placeholder", kind="placeholder"), Node("mm_1", "aten.mm.default", ["x"]),
                                Node("abs_1", "aten.abs.default", ["mm_1"]),
                                Node("output", "output", ["abs_1"], kind="output")])
    a = ledger(tmp_path, [("fx-final", g)])
    w = LedgerWriter.create(tmp_path, "m", command="compile")
    w.graph("1-inference", "inference")
    w.add_stage("1-inference", "fx-final", renamed)
    w.graph("2-inference", "inference")
    w.add_stage("2-inference", "fx-final", g)
    w.finish()
    runs = diff_runs(a, w.root)
    assert [(gr.id, gr.status, [(s.name, s.status) for s in gr.stages]) for gr in runs.graphs] == [
        ("1-inference", "both", [("fx-final", "same")]), ("2-inference", "only_b", [("fx-final", "only_b")])]


def test_a_wait_that_moved_is_a_change_of_place() -> None:
    report = diff_graphs(fx("mm", "abs", "sub", wait_before="sub"), fx("mm", "abs", "sub", wait_before="abs"))
    assert not report.added and not report.removed and not report.edges_added and not report.edges_removed
    (change,) = report.changed
    assert change.name == "wait" and change.changes == {"place": {"old": "before sub", "new": "before abs"}}
    same = diff_graphs(fx("mm", "abs", "sub", wait_before="sub"), fx("mm", "abs", "sub", wait_before="sub"))
    assert same.empty

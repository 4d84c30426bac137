"""The assignment report on small written ledgers (no compile): each category from what the ledger
holds, the static-kernel option, a capture that fell back, and GE's compile statistics
(``fusion_result.json``) read and checked against the GE stages, or refused with the file named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airctl.diff.assignment import assignment_table, super_kernel_scopes
from airctl.errors import AirctlError
from airctl.graph.model import Graph, Node
from airctl.ledger.reader import Ledger
from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.show import assignment

FX = "call_function"


def _fx() -> Graph:
    scope = {"args": [["_super_kernel_scope", "_super_kernel_options"], ["sk0", ""]]}
    return Graph("g", "fx", [
        Node("x", "placeholder", kind="placeholder"),
        Node("scope_enter", "air.scope_enter.default", kind=FX, attrs=scope),
        Node("mm", "aten.mm.default", ["x", "x"], kind=FX),
        Node("split", "aten.split.Tensor", ["mm"], kind=FX),
        Node("scope_exit", "air.scope_exit.default", kind=FX),
        Node("first", "_operator.getitem", ["split"], kind=FX),
        Node("relu", "aten.relu.default", ["first"], kind=FX),
        Node("size", "aten.sym_size.int", ["relu"], kind=FX),
        Node("out", "output", ["relu"], kind="output"),
    ])


def _ge(*names: tuple[str, str, str]) -> Graph:
    return Graph("g", "ge", [Node(n, op, meta={"fx_tensor_names": [f"{fx}-x.OUTPUT.0"]}) for n, op, fx in names])


def _ledger(out: Path, mode: str, options: dict | None = None, captures: list | None = None,
            ge: bool = True, backend: str = "sim") -> Path:
    w = LedgerWriter.create(out, "assign", command="compile", mode=mode, status="ok", backend={"name": backend})
    w.graph("1-inference", "inference", name="graph_1")
    w.add_stage("1-inference", "fx-final", _fx())
    if ge:
        w.add_stage("1-inference", "ge-original", _ge(("MatMul", "MatMul", "mm"), ("Split", "SplitV", "split"),
                                                      ("Relu", "Relu", "relu")), changed=True)
        w.add_stage("1-inference", "ge-optimized", _ge(("MatMul", "MatMul", "mm"), ("Relu", "Relu", "relu")),
                    changed=True)
    if options:
        w.set(options=options)
    if captures:
        w.set(captures=captures)
    w.finish()
    return w.root


def _rows(table: dict) -> dict[str, tuple]:
    (g,) = table["graphs"]
    return {r["node"]: (r["category"], r["ge_ops"], r["static_kernel"], r["super_kernel"]) for r in g["nodes"]}


def test_each_ge_category(tmp_path: Path) -> None:
    table = assignment(_ledger(tmp_path / "runs", "max-autotune"))
    rows = _rows(table)
    assert rows == {
        "x": ("input", [], None, None), "scope_enter": ("scope", [], None, None),
        "mm": ("converted", [["MatMul", "MatMul"]], None, "sk0"),
        "split": ("fused away", [], None, "sk0"),  # SplitV in ge-original, gone from ge-optimized
        "scope_exit": ("scope", [], None, None), "first": ("kept in Python", [], None, None),
        "relu": ("converted", [["Relu", "Relu"]], None, None), "size": ("kept in Python", [], None, None),
        "out": ("output", [], None, None)}
    assert table["totals"] == {"converted": 2, "fused away": 1, "kept in Python": 2, "scope": 2, "input": 1,
                               "output": 1}
    assert table["graphs"][0]["ge_ops_lost"] == 1
    assert table["compile_stat"]["status"] == "absent" and "under sim" in table["compile_stat"]["note"]


def test_aclgraph_captured_static_kernels_and_fallback(tmp_path: Path) -> None:
    captured = [{"graph": "1-inference", "event": "capture", "call": 1, "key": "[4]", "seq": 1.0},
                {"graph": "1-inference", "event": "recapture", "call": 2, "key": "[6]", "seq": 2.0}]
    table = assignment(_ledger(tmp_path / "a", "npugraph_ex", {"static_kernel_compile": "True"}, captured, ge=False))
    rows = _rows(table)
    assert rows["mm"] == ("captured", [], True, "sk0") and rows["relu"][:3] == ("captured", [], True)
    assert rows["first"] == ("kept in Python", [], None, None) and rows["x"][2] is None
    assert table["graphs"][0]["captured"] == ["[4]", "[6]"] and table["static_kernels"] is True
    assert table["compile_stat"]["status"] == "not applicable"
    fell = [*captured, {"graph": "1-inference", "event": "fallback", "call": 3, "seq": 3.0}]
    table = assignment(_ledger(tmp_path / "b", "reduce-overhead", None, fell, ge=False))
    rows = _rows(table)
    assert rows["mm"] == ("fallen back", [], False, "sk0") and table["graphs"][0]["fell_back"] is True
    assert table["static_kernel_option"] == "experimental_config.aclgraph._aclnn_static_shape_kernel"


def _stat(effect: str) -> dict:
    return {"session_and_graph_id_0_1": {"graph_fusion": {"SplitFusion": {"match_times": "1", "effect_times": effect}},
                                         "ub_fusion": {"AutomaticUbFusion": {"match_times": "0", "effect_times": "0"}}}}


def test_ge_compile_statistics_cross_checked(tmp_path: Path) -> None:
    root = _ledger(tmp_path / "runs", "max-autotune", backend="npu")
    assert "no fusion_result.json" in assignment(root)["compile_stat"]["note"]
    (root / "fusion_result.json").write_text(json.dumps(_stat("1")))
    stat = assignment(root)["compile_stat"]
    assert stat["status"] == "agree" and stat["effect"] == 1 and stat["fused_away"] == 1
    assert stat["graphs"] == {"session_and_graph_id_0_1": {"match": 1, "effect": 1, "passes": 2}}
    (root / "fusion_result.json").write_text(json.dumps(_stat("0")))
    assert assignment(root)["compile_stat"]["status"] == "differ"
    (root / "fusion_result.json").write_text("[1, 2")
    with pytest.raises(AirctlError, match="unreadable fusion_result.json") as e:
        assignment(root)
    assert e.value.file == str(root / "fusion_result.json")


def test_super_kernel_scopes_nest_and_opt_out() -> None:
    def enter(name: str, value: str) -> Node:
        return Node(name, "air.scope_enter.default", kind=FX, attrs={"args": [["_super_kernel_scope"], [value]]})

    def op(name: str) -> Node:
        return Node(name, "aten.relu.default", kind=FX)

    exit_ = Node("x1", "air.scope_exit.default", kind=FX)
    g = Graph("g", "fx", [enter("e1", "outer"), op("a"), enter("e2", ""), op("b"), exit_,
                          op("c"), Node("x2", "air.scope_exit.default", kind=FX), op("d")])
    assert super_kernel_scopes(g) == {"a": "outer", "c": "outer"}


def test_assignment_of_a_ledger_without_fx(tmp_path: Path) -> None:
    w = LedgerWriter.create(tmp_path, "ge-only", command="compile", status="ok")
    w.graph("1-inference", "inference")
    w.add_stage("1-inference", "ge-original", _ge(("MatMul", "MatMul", "mm")))
    w.finish()
    table = assignment_table(Ledger.open(w.root))
    assert table["graphs"] == [] and table["totals"] == {}

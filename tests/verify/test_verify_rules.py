"""Rule behaviour on small hand-built graphs (no torch): modes, edge cases, instrument, R11."""

from __future__ import annotations

from airctl.graph.model import Graph, Node
from airctl.verify import finding_for_returned_graph, verify
from airctl.verify.cycles import cyclic_components
from airctl.verify.instrument import VerifyEach

S1 = [["_user_stream_label"], ["stream_1"]]


def op(name: str, target: str, *inputs: str, args: list | None = None) -> Node:
    return Node(name, target, inputs=list(inputs), kind="call_function",
                attrs={"args": args if args is not None else [f"%{i}" for i in inputs]})


def air(name: str, what: str, args: list) -> Node:
    refs = [a[1:] for a in args[0] if isinstance(a, str)] if what == "wait" and isinstance(args[0], list) else []
    return Node(name, f"air.{what}.default", inputs=refs, attrs={"args": args}, kind="call_function")


def ph(name: str) -> Node:
    return Node(name, "placeholder", kind="placeholder")


def out(*inputs: str) -> Node:
    return Node("output", "output", inputs=list(inputs), kind="output", attrs={"args": [[f"%{i}" for i in inputs]]})


def rules(graph: Graph, mode: str) -> list[tuple[str, str]]:
    return [(f.rule, f.severity) for f in verify(graph, mode)]


def test_side_stream_reading_default_work_without_wait_races_in_reduce_overhead() -> None:
    # the fork is at graph start: default-stream work done before scope_enter is NOT visible to stream_1
    g = Graph("g", "fx", [ph("x"), op("r", "aten.relu.default", "x"), air("e", "scope_enter", S1),
                          op("m", "aten.mm.default", "r", "r"), air("rec", "record", []), air("q", "scope_exit", []),
                          air("w", "wait", [["%rec"]]), op("n", "aten.neg.default", "m"), out("n")])
    assert rules(g, "reduce-overhead") == [("race_cross_stream_without_wait", "error")]
    assert verify(g, "reduce-overhead")[0].nodes == ["r", "m"]
    assert rules(g, "max-autotune") == []


def test_output_reading_side_stream_is_joined_in_reduce_overhead() -> None:
    g = Graph("g", "fx", [ph("x"), air("e", "scope_enter", S1), op("m", "aten.mm.default", "x", "x"),
                          air("q", "scope_exit", []), out("m")])
    assert rules(g, "reduce-overhead") == []
    assert rules(g, "max-autotune") == []


def test_wait_on_dropped_record_orders_nothing_in_max_autotune() -> None:
    # record before any op on stream_1 (R7): the wait is dropped, so only the data edge syncs
    g = Graph("g", "fx", [ph("x"), air("e", "scope_enter", S1), air("rec", "record", []),
                          op("m", "aten.mm.default", "x", "x"), air("q", "scope_exit", []),
                          air("w", "wait", [["%rec"]]), op("n", "aten.neg.default", "m"), out("n")])
    assert rules(g, "max-autotune") == [("record_before_any_op", "error")]
    # aclgraph records an event there: it is real, but placed before mm, so neg still races
    assert rules(g, "reduce-overhead") == [("race_cross_stream_without_wait", "error")]


def test_unmatched_exit_and_wait_on_missing_node() -> None:
    g = Graph("g", "fx", [ph("x"), air("q", "scope_exit", []), air("w", "wait", [["%nope", 3]]),
                          op("n", "aten.neg.default", "x"), out("n")])
    found = verify(g, "max-autotune")
    assert [(f.rule, f.nodes) for f in found] == [("unbalanced_scope", ["q"]), ("wait_on_unknown_record", ["w"]),
                                                  ("wait_on_unknown_record", ["w"])]


def test_reduce_overhead_reads_values0_as_label() -> None:
    g = Graph("g", "fx", [ph("x"), air("e", "scope_enter", [["_user_stream_priority", "_user_stream_label"],
                                                           ["0", "stream_1"]]),
                          op("m", "aten.mm.default", "x", "x"), air("q", "scope_exit", []), out("m")])
    [f] = verify(g, "reduce-overhead")
    assert f.rule == "stream_label_not_first" and "'0'" in f.message


def test_cycle_components() -> None:
    assert cyclic_components([[1], [2], []]) == []
    assert cyclic_components([[1], [0], [2]]) == [[0, 1], [2]]


def test_source_is_filled_from_the_node() -> None:
    g = Graph("g", "fx", [ph("x"), air("e", "scope_enter", S1), op("m", "aten.mm.default", "x", "x"), out("m")])
    g.nodes[1].source = "model.py:12"
    [f] = verify(g, "max-autotune")
    assert f.rule == "unbalanced_scope" and f.source == "model.py:12"
    assert f.to_json()["source"] == "model.py:12"


def test_verify_each_names_the_pass_that_broke_balance() -> None:
    ok = Graph("g", "fx", [ph("x"), op("m", "aten.mm.default", "x", "x"), out("m")])
    broken = Graph("g", "fx", [ph("x"), air("e", "scope_enter", S1), op("m", "aten.mm.default", "x", "x"), out("m")])
    inst = VerifyEach("reduce-overhead")
    inst.before_pass("noop", ok)
    inst.after_pass("noop", ok)
    inst.before_pass("wrap", ok)
    inst.after_pass("wrap", broken)
    inst.after_pass_failed("later", broken, RuntimeError("boom"))
    assert list(inst.findings_by_stage) == ["before:noop", "after:noop", "after:wrap", "failed:later"]
    present, fixed = inst.verdict()
    assert [(stage, f.rule, f.graph) for stage, f in present] == [("after:wrap", "unbalanced_scope", "failed:later")]
    assert fixed == []


def test_finding_for_returned_graph() -> None:
    assert finding_for_returned_graph("p", None) is None
    f = finding_for_returned_graph("p", object(), mode="reduce-overhead", changed_in_place=False)
    assert f is not None and (f.rule, f.severity, f.mode, f.ref) == ("pass_returned_new_graph", "error",
                                                                     "reduce-overhead", "R11")
    assert finding_for_returned_graph("p", object(), changed_in_place=True).severity == "warning"

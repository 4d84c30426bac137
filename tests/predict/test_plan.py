"""Which orderings a replay plan keeps, per mode and dialect (docs/profile.md "The model", point 3)."""

from __future__ import annotations

from airctl.graph.model import Graph, Node
from airctl.predict.plan import COMM_STREAM, FREE, KERNEL, MARKER, plan_from_graph


def fx_seed(wait: bool) -> Graph:
    """mm on stream_1 (recorded); add reads it on the default stream, after a wait or not."""
    nodes = [Node("x", "placeholder", kind="placeholder"),
             Node("enter", "air.scope_enter.default", kind="call_function",
                  attrs={"args": [["_user_stream_label"], ["stream_1"]]}),
             Node("mm", "aten.mm.default", ["x"], kind="call_function", attrs={"args": ["%x", "%x"]}),
             Node("rec", "air.record.default", kind="call_function", attrs={"args": []}),
             Node("exit", "air.scope_exit.default", kind="call_function", attrs={"args": []})]
    if wait:
        nodes.append(Node("w", "air.wait.default", ["rec"], kind="call_function", attrs={"args": [["%rec"]]}))
    nodes += [Node("v", "aten.view.default", ["mm"], kind="call_function", attrs={"args": ["%mm", [9]]}),
              Node("add", "aten.add.Tensor", ["v"], kind="call_function", attrs={"args": ["%v", 1]}),
              Node("output", "output", ["add"], kind="output")]
    return Graph("g", "fx", nodes)


def by_name(plan):  # noqa: ANN001, ANN201
    return {t.name: t for t in plan.tasks}


def test_aclgraph_waits_only_on_its_records_not_on_data() -> None:
    racy = by_name(plan_from_graph(fx_seed(wait=False), "reduce-overhead"))
    assert racy["mm"].stream == "stream_1" and racy["add"].stream == "default"
    assert racy["v"].after == [] and racy["add"].after == []  # a race: the device does not wait
    ok = by_name(plan_from_graph(fx_seed(wait=True), "npugraph_ex"))
    assert ok["w"].after == [(3, "record_wait")] and ok["w"].kind == MARKER


def test_max_autotune_fx_waits_on_cross_stream_data() -> None:
    tasks = by_name(plan_from_graph(fx_seed(wait=False), "max-autotune"))
    assert tasks["v"].kind == FREE and tasks["add"].kind == KERNEL
    assert tasks["v"].after == [(2, "data")]  # GE puts an event on the cross-stream edge


def test_ge_control_edges_order_and_collectives_get_their_own_stream() -> None:
    g = Graph("g", "ge", [
        Node("arg", "Data"),
        Node("MatMul", "MatMul", ["arg:0", "arg:0"], stream="s1"),
        Node("AllReduce", "HcomAllReduce", ["MatMul:0"]),
        Node("Sub", "Sub", ["arg:0"], control_inputs=["MatMul"]),
        Node("out", "NetOutput", ["Sub:0", "AllReduce:0"]),
    ])
    tasks = by_name(plan_from_graph(g, "max-autotune"))
    assert tasks["AllReduce"].stream == COMM_STREAM
    assert tasks["AllReduce"].after == [(1, "data")]
    assert tasks["Sub"].after == [(1, "record_wait")]
    assert tasks["arg"].kind == FREE and tasks["out"].kind == FREE


def test_tagged_closure_events_pair_by_tag() -> None:
    g = Graph("g", "fx", [
        Node("r", "air.tagged_event_record.default", kind="call_function", attrs={"args": ["t1", True]}),
        Node("enter", "air.scope_enter.default", kind="call_function",
             attrs={"args": [["_user_stream_label"], ["s1"]]}),
        Node("w", "air.tagged_event_wait.default", kind="call_function", attrs={"args": ["t1", True]}),
        Node("exit", "air.scope_exit.default", kind="call_function", attrs={"args": []}),
    ])
    tasks = by_name(plan_from_graph(g, "reduce-overhead"))
    assert tasks["w"].after == [(0, "fork")]

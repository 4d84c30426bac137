"""``--collapse``: big graphs folded by module or stream runs, with the record/wait structure kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.errors import AirctlError
from airctl.graph.model import Graph, Node
from airctl.render.collapse import collapse
from airctl.render.order import program_order


def _two_stream_block(prefix: str, first_input: str) -> list[Node]:
    p = prefix
    return [
        Node(f"{p}ln", "aten.layer_norm.default", [first_input], module=f"{p}ln"),
        Node(f"{p}rec", "air.record.default"),
        Node(f"{p}enter", "air.scope_enter.default", attrs={"args": [["_user_stream_label"], ["s1"]]}, stream="s1"),
        Node(f"{p}w_in", "air.wait.default", [f"{p}rec"], stream="s1"),
        Node(f"{p}mm1", "aten.mm.default", [f"{p}ln", f"{p}ln"], module=f"{p}mlp.fc1", stream="s1"),
        Node(f"{p}relu", "aten.relu.default", [f"{p}mm1"], module=f"{p}mlp.act", stream="s1"),
        Node(f"{p}rec_out", "air.record.default", stream="s1"),
        Node(f"{p}exit", "air.scope_exit.default", stream="s1"),
        Node(f"{p}w_out", "air.wait.default", [f"{p}rec_out"]),
        Node(f"{p}add", "aten.add.Tensor", [f"{p}ln", f"{p}relu"], module=f"{p}res"),
    ]


def _graph(blocks: int = 2) -> Graph:
    nodes = [Node("x", "placeholder", kind="placeholder")]
    last = "x"
    for b in range(blocks):
        nodes += _two_stream_block(f"layers.{b}.", last)
        last = f"layers.{b}.add"
    nodes.append(Node("output", "output", [last], kind="output"))
    return Graph("g", "fx", nodes)


def test_module_groups_keep_streams_and_every_record_wait_edge() -> None:
    g = _graph()
    folded = collapse(g, "module", depth=2)
    names = {n.name for n in folded.nodes}
    assert {"layers.0 @s1", "layers.0", "layers.1 @s1", "layers.1"} <= names
    assert not any(n.op.startswith("air.scope") for n in folded.nodes)
    sync_before = {(e.src, e.dst) for e in g.edges() if e.kind == "sync"}
    sync_after = {(e.src, e.dst) for e in folded.edges() if e.kind == "sync"}
    assert sync_before == sync_after and len(sync_after) == 4
    box = folded.node("layers.0 @s1")
    assert box.stream == "s1" and box.attrs["nodes"] == 2
    # program order on the stream is kept as order edges, not as (GE-meaningful) control edges
    assert box.control_inputs == [] and box.meta["order_after"] == ["layers.0.w_in"]  # the wait comes first
    assert folded.node("layers.0.rec_out").meta["order_after"] == ["layers.0 @s1"]
    every = {n.name for n in folded.nodes}
    assert all(Node.producer(r) in every for n in folded.nodes for r in (*n.inputs, *n.control_inputs))
    order = program_order(folded)
    names = [n.name for n in folded.nodes]
    pairs = {(names[s], names[d]) for s, d in order.pairs()}
    assert ("layers.0.w_in", "layers.0 @s1") in pairs and ("layers.0 @s1", "layers.0.rec_out") in pairs
    assert names.index("layers.0.w_in") in order.pull  # a wait sits right above the box it precedes
    assert not any(e.kind == "control" for e in folded.edges())


def test_stream_runs_fold_each_scope_range() -> None:
    folded = collapse(_graph(blocks=3), "stream")
    boxes = [n for n in folded.nodes if n.kind == "group" and n.stream == "s1"]
    assert len(boxes) == 3 and all(b.attrs["nodes"] == 2 for b in boxes)


def test_bad_options() -> None:
    with pytest.raises(AirctlError):
        collapse(_graph(), "layer")
    with pytest.raises(AirctlError):
        collapse(_graph(), "module", depth=0)


def test_a_big_graph_collapses_into_something_graphviz_can_draw(tmp_path: Path) -> None:
    from airctl.io.read import write_graph
    from airctl.pipeline.dump import dump_source
    from airctl.render.dot import DOT_LIMIT

    g = _graph(blocks=250)  # 2502 nodes: too many for dot
    assert len(g) > DOT_LIMIT and len(collapse(g, "module", 2)) < DOT_LIMIT
    src = tmp_path / "big.json"
    src.write_text(write_graph(g, "json"))
    out = tmp_path / "big.dot"
    assert dump_source(src, "dot", out=out, collapse="module", depth=2).written == out
    text = out.read_text()
    assert text.count("->") > 1000 and "layers.249 @s1" in text

"""A GE graph in airctl's graph model runs on the multi-stream executor (airctl/execute/ge_program.py)."""

from __future__ import annotations

import pytest

from airctl.execute.ge_program import GeGraphError, build, unsupported
from airctl.graph.model import Graph, Node


def _data(name: str, index: int) -> Node:
    return Node(name, "Data", attrs={"index": index})


def _graph(*nodes: Node) -> Graph:
    return Graph("g", "ge", list(nodes))


def _run(graph: Graph, *inputs):
    from airctl.execute.executor import StreamExecutor

    program = build(graph)
    return StreamExecutor(program.gm, name=graph.name).run(list(inputs))


def test_ops_run_in_data_edge_order_with_consts_and_multi_output_ops() -> None:
    import torch

    two = torch.tensor([2.0]).numpy().tobytes().hex()
    graph = _graph(  # deliberately not in topological order: the lowering sorts it
        Node("out", "NetOutput", inputs=["Relu:0", "Split:1"]),
        Node("Relu", "Relu", inputs=["Split:0"]),
        Node("Split", "SplitV", inputs=["Mul:0", "sizes:0", "dim:0"], attrs={"num_split": 2}),
        Node("Mul", "Mul", inputs=["Add:0", "two:0"]),
        Node("Add", "Add", inputs=["x:0", "y:0"]),
        Node("two", "Const", attrs={"value": {"tensor": True, "dtype": 1, "shape": [1], "hex": two}}),
        Node("sizes", "Const", attrs={"value": {"tensor": True, "dtype": 8, "shape": [2],
                                                "hex": torch.tensor([1, 2]).numpy().tobytes().hex()}}),
        Node("dim", "Const", attrs={"value": {"tensor": True, "dtype": 7, "shape": [],
                                              "hex": torch.tensor(1, dtype=torch.int32).numpy().tobytes().hex()}}),
        _data("y", 1), _data("x", 0),
    )
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    relu, rest = _run(graph, x, y)
    want = (x + y) * 2
    torch.testing.assert_close(relu, torch.relu(want[:, :1]))
    torch.testing.assert_close(rest, want[:, 1:])


def test_a_const_the_dump_kept_no_bytes_of_runs_as_zeros_with_a_note() -> None:
    graph = _graph(_data("x", 0), Node("w", "Const", attrs={"value": {"tensor": True, "dtype": 1, "shape": [2],
                                                                      "bytes": 8}}),
                   Node("Add", "Add", inputs=["x:0", "w:0"]), Node("out", "NetOutput", inputs=["Add:0"]))
    program = build(graph)
    assert program.notes == ["Const w: the dump keeps no data (8 bytes); zeros stand in"]


def test_every_op_type_without_a_kernel_is_named_with_its_nodes() -> None:
    graph = _graph(_data("x", 0), Node("a", "Dawsn", inputs=["x:0"]), Node("b", "Dawsn", inputs=["a:0"]),
                   Node("c", "FlashAttentionScore", inputs=["b:0"]), Node("out", "NetOutput", inputs=["c:0"]))
    assert unsupported(graph) == {"Dawsn": ["a", "b"], "FlashAttentionScore": ["c"]}
    with pytest.raises(GeGraphError, match=r"Dawsn \(a, b\); FlashAttentionScore \(c\)") as info:
        build(graph)
    assert "ge_ops.py" in (info.value.hint or "")


def test_a_cycle_and_a_missing_net_output_are_refused() -> None:
    with pytest.raises(GeGraphError, match="cycle"):
        build(_graph(Node("a", "Abs", inputs=["b:0"]), Node("b", "Abs", inputs=["a:0"]),
                     Node("out", "NetOutput", inputs=["a:0"])))
    with pytest.raises(GeGraphError, match="no NetOutput"):
        build(_graph(_data("x", 0), Node("a", "Abs", inputs=["x:0"])))


def test_dtypes_torch_has_no_cpu_kernel_for_are_computed_wider_and_cast_back() -> None:
    import torch

    from airctl.execute.ge_ops import KERNELS

    e8m0 = torch.ones(1, 2).to(torch.float8_e8m0fnu)
    assert KERNELS["Add"]([e8m0, e8m0], {}).dtype == torch.float8_e8m0fnu
    u16 = torch.tensor([1, 2], dtype=torch.uint16)
    assert torch.equal(KERNELS["Mul"]([u16, u16], {}), torch.tensor([1, 4], dtype=torch.uint16))
    assert KERNELS["Less"]([u16, u16], {}).dtype == torch.bool

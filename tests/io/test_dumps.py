"""Acceptance 1: every TorchAir dump loads, shows streams and control edges, and round-trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.io.ge_text import parse_txt, write_txt
from airctl.io.json_io import from_dict, to_dict
from airctl.io.pbtxt import parse_pbtxt, write_pbtxt
from airctl.io.py_dump import parse_py_dump
from airctl.io.read import read_graph
from tests.io.dumps import DUMPS, GE_DUMPS, PY_DUMPS


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


@pytest.mark.parametrize("path", GE_DUMPS, ids=_id)
def test_dump_loads_with_streams_and_control_edges(path: Path) -> None:
    g = read_graph(path)
    assert g.dialect == "ge"
    assert [n.op for n in g.nodes] == ["Data", "MatMul", "Abs", "Const", "Add", "Sub", "NetOutput"]
    streams = {n.name: n.stream for n in g.nodes}
    control = [(e.src, e.dst) for e in g.edges() if e.kind == "control"]
    if path.parent.name == "stream":
        assert streams == {"arg0_1": None, "MatMul": "stream_1", "Abs": "stream_1", "Const": None, "Add": None,
                           "Sub": None, "NetOutput": None}
        assert control == [("Abs", "Sub")]
    else:
        assert set(streams.values()) == {None}
        assert control == []
    assert g.node("MatMul").meta["fx_tensor_names"] == ["mm-aten.mm.default.OUTPUT.0"]
    assert g.node("Const").attrs["value"]["hex"] == "0000803f"  # float32 1.0


@pytest.mark.parametrize("path", GE_DUMPS, ids=_id)
def test_dump_round_trips_through_every_format(path: Path) -> None:
    g = read_graph(path)
    pbtxt, txt = write_pbtxt(g), write_txt(g)
    # a dump's graph is fully expressible in GE terms: nothing needs airctl's side channel
    assert "_airctl" not in pbtxt and "_airctl" not in txt
    assert parse_pbtxt(pbtxt, "x.pbtxt") == g
    assert parse_txt(txt, "x.txt") == g
    assert from_dict(to_dict(g)) == g


@pytest.mark.parametrize("variant", ["plain", "stream"])
@pytest.mark.parametrize("stage", ["original", "optimized"])
def test_pbtxt_and_txt_of_one_graph_agree(variant: str, stage: str) -> None:
    a = read_graph(DUMPS / variant / f"{stage}.pbtxt")
    b = read_graph(DUMPS / variant / f"{stage}.txt")
    assert a.nodes == b.nodes
    if stage == "optimized":  # graph attributes only exist in the txt dump, and only after GE passes
        assert set(b.attrs) == {"_executor_type", "_input_placements", "_output_dtypes"}


def test_pbtxt_writer_matches_torchair_layout() -> None:
    g = read_graph(DUMPS / "stream" / "optimized.txt")
    text = write_pbtxt(g)
    sub = '\nnode {\n    name: "Sub"\n    op: "Sub"\n    input: "arg0_1:0"\n    input: "MatMul:0"\n    input: "^Abs"\n'
    assert sub in text
    assert "        key: \"_user_stream_label\"\n        value {\n            s: 's: \"stream_1\"\\n'\n" in text


@pytest.mark.parametrize("path", PY_DUMPS, ids=_id)
def test_py_dump_carries_fx_provenance(path: Path) -> None:
    g = read_graph(path)
    assert [n.name for n in g.nodes] == ["arg0_1", "MatMul", "Abs", "Const", "Add", "Sub", "NetOutput"]
    mm = g.node("MatMul")
    assert mm.meta["fx_node"] == "mm" and mm.meta["fx_target"] == "aten.mm.default"
    assert mm.source is not None and mm.source.endswith("make_dumps.py:" + mm.source.rsplit(":", 1)[1])
    assert g.node("Add").inputs == ["Abs:0", "Const:0"]
    assert g.node("Const").attrs["value"] == 1
    assert g.node("NetOutput").meta.get("fx_node") is None  # the blank line ends sub's group
    assert g.node("MatMul").inputs == ["arg0_1:0", "arg0_1:0", ""]


def test_py_dump_dependencies_become_control_inputs() -> None:
    text = ("# -*- coding: utf-8 -*-\nfrom torchair._ge_concrete_graph import ge_apis as ge\n"
            'a_0 = ge.Data(index=0, node_name="a")\nb_0 = ge.Abs(a_0, node_name="b")\n'
            'c_0 = ge.Split(b_0, num_split=2, node_name="c")\n'
            '_ = ge.NetOutput([c_0[1], b_0], dependencies=[b_0], node_name="out")\n')
    g = parse_py_dump(text, "t.py")
    assert g.node("out").inputs == ["c:1", "b:0"]
    assert g.node("out").control_inputs == ["b"]
    assert g.node("c").attrs == {"num_split": 2}

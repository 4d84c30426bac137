"""GE's automatic multi-stream under sim (issue 58, acceptance 1): ``ge_config.multistream_parallel_mode``
reaches the stand-in's build, the ledger gains the ``ge-build`` stage (ops with their stream ids, GE's
Send/Recv events) that dump, lanes and check read, and the run executes on GE's streams, race-free and
equal to eager."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from airctl.graph.model import Graph, Node
from airctl.sim.ge_build import OPTION, PROFILING_ENV, build, op_times

MODELS = Path(__file__).resolve().parents[2] / "fixtures" / "models"


def _serialized(graph: Graph) -> bytes:
    from airctl.io.ge_build import to_graph_def
    from airctl.io.ge_schema import message_class

    model = message_class("ModelDef")()
    model.graph.add().CopyFrom(to_graph_def(graph)[0])
    return model.SerializeToString()


def _diamond() -> Graph:
    return Graph("graph_1", "ge", [
        Node("x", "Data", attrs={"index": 0}), Node("MatMul", "MatMul", ["x:0", "x:0"]),
        Node("Abs", "Abs", ["x:0"]), Node("Exp", "Exp", ["Abs:0"]),
        Node("Add", "Add", ["MatMul:0", "Exp:0"]), Node("NetOutput", "NetOutput", ["Add:0"])])


def test_no_option_no_build() -> None:
    assert build(_serialized(_diamond()), {}, "graph_1") is None


def test_the_build_stage_has_streams_and_events() -> None:
    built = build(_serialized(_diamond()), {OPTION: "LoadBalance:2"}, "graph_1")
    assert built is not None
    g = built.graph
    assert built.allocation.streams == [0, 1]
    assert g.attrs["_auto_multistream_mode"] == "LoadBalance:2"
    assert [n.op for n in g.nodes].count("Send") == [n.op for n in g.nodes].count("Recv") == 1
    send = next(n for n in g.nodes if n.op == "Send")
    recv = next(n for n in g.nodes if n.op == "Recv")
    assert recv.control_inputs == [send.name] and recv.name in g.node("Add").control_inputs
    assert send.stream == g.node(send.control_inputs[0]).stream == "1"
    assert g.node("Add").stream is None


def test_the_build_stage_survives_pbtxt_and_txt() -> None:
    from airctl.io.read import parse_graph, write_graph

    built = build(_serialized(_diamond()), {OPTION: "MainStream:2"}, "graph_1")
    assert built is not None
    for fmt in ("pbtxt", "txt"):
        text = write_graph(built.graph, fmt)
        assert "_airctl" not in text  # streams and events in GE's own fields, nothing airctl-only
        back = parse_graph(text, fmt, "<test>", "graph_1")
        assert back.structure() == built.graph.structure(), fmt
    assert 'device: "stream:1"' in write_graph(built.graph, "pbtxt")


def test_a_bad_mode_fails_the_build_with_the_forms() -> None:
    fix = r"LoadBalance:0.*1\.\.64.*Fix: set config.ge_config.multistream_parallel_mode"
    with pytest.raises(RuntimeError, match=fix):
        build(_serialized(_diamond()), {OPTION: "LoadBalance:0"}, "graph_1")


def _op_summary(path: Path, rows: list[tuple[str, float]]) -> Path:
    lines = ["Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us)"]
    lines += [f"0,1,{k},2,{name},Abs,AI_VECTOR_CORE,{1000 + 100 * k},{dur}" for k, (name, dur) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_op_times_from_an_op_summary(tmp_path: Path) -> None:
    csv = _op_summary(tmp_path / "op_summary_0_1.csv", [("MatMul", 10.0), ("MatMul", 30.0), ("Abs", 2.5)])
    times, notes = op_times(str(csv))
    assert times == {"MatMul": 20.0, "Abs": 2.5} and notes == []
    assert op_times(str(tmp_path))[1][0].startswith(f"{PROFILING_ENV} only takes a .csv")
    assert "not read" in op_times(str(tmp_path / "missing.csv"))[1][0]
    assert op_times(None) == ({}, [])


def test_weighted_mode_reads_minidag_profiling_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    csv = _op_summary(tmp_path / "op_summary.csv", [("MatMul", 50.0), ("Abs", 1.0), ("Exp", 1.0), ("Add", 1.0)])
    monkeypatch.setenv(PROFILING_ENV, str(csv))
    built = build(_serialized(_diamond()), {OPTION: "WeightedLoadBalance:2"}, "graph_1")
    assert built is not None and built.allocation.weighted
    monkeypatch.setenv(PROFILING_ENV, str(tmp_path / "nothing.csv"))
    unweighted = build(_serialized(_diamond()), {OPTION: "WeightedLoadBalance:2"}, "graph_1")
    assert unweighted is not None and not unweighted.allocation.weighted
    assert any("not read" in n for n in unweighted.notes) and any("LoadBalance used" in n for n in unweighted.notes)


@pytest.mark.slow
def test_a_model_compiled_with_load_balance_2(tmp_path: Path) -> None:
    from airctl.io.read import read_graph
    from airctl.ledger.reader import Ledger
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.pipeline.dump import dump_source
    from airctl.verify import verify

    result = compile_model(CompileRequest.of(MODELS / "blocks.py", mode="max-autotune", out_dir=tmp_path,
                                             backend="sim",
                                             options={"ge_config.multistream_parallel_mode": "LoadBalance:2"}))
    assert result.error is None and result.execution is not None and result.execution.matches
    assert result.races == []
    ledger = Ledger.open(result.ledger_dir)
    gid = ledger.index.graphs[0].id
    stages = ledger.index.stages(gid)
    assert stages[-1].name == "ge-build" and stages[-1].dialect == "ge"
    graph = ledger.load(stages[-1])
    assert len([s for s in graph.streams() if s is not None]) == 1 and None in graph.streams()  # two GE streams
    assert any(n.op == "Send" for n in graph.nodes) and any(n.op == "Recv" for n in graph.nodes)
    assert not [f for f in verify(graph, "max-autotune") if f.severity == "error"]
    out = dump_source(result.ledger_dir, "pbtxt", out=tmp_path / "build.pbtxt")
    assert out.text is not None and 'device: "stream:1"' in out.text and 'op: "Recv"' in out.text
    assert read_graph(tmp_path / "build.pbtxt").streams() == graph.streams()
    lanes = dump_source(result.ledger_dir, "lanes", stage="ge-build", out=tmp_path / "build.svg")
    assert "2 streams" in " ".join(lanes.notes)
    text = gzip.decompress((result.ledger_dir / stages[-1].text).read_bytes()).decode() if stages[-1].text else ""
    assert "stream=1" in text
    assert json.loads((result.ledger_dir / "index.json").read_text())["options"] == {
        "ge_config.multistream_parallel_mode": "LoadBalance:2"}


@pytest.mark.slow
def test_the_fx_graph_runs_each_node_on_its_ge_stream() -> None:
    import torch

    from airctl.graph.ge_streams import Allocation
    from airctl.io.fx_reader import read_fx
    from airctl.sim.ge_build import GeBuild, scoped_module
    from airctl.sim.session import load_torchair
    from airctl.verify.plan import build_plan

    load_torchair()  # torch.ops.air

    class Two(torch.nn.Module):
        def forward(self, a, b):
            x = torch.mm(a, a)
            y = torch.abs(b)
            z = torch.topk(y, 2)
            return x + z[0].sum()

    gm = torch.fx.symbolic_trace(Two())
    names = {n.name for n in gm.graph.nodes}
    assert {"mm", "abs_1", "topk", "getitem", "add"} <= names
    built = GeBuild(Graph("g", "ge"), Allocation("LoadBalance:2"),
                    {"mm": None, "abs_1": "1", "topk": "1", "sum_1": "1", "add": None})
    scoped = scoped_module(built, gm)
    assert scoped_module(built, gm) is scoped  # made once per module
    plan = build_plan(read_fx(scoped, "scoped"), "max-autotune")
    stream = {node.name: plan.stream[i] for i, node in enumerate(plan.nodes)}
    assert stream["abs_1"] == stream["topk"] == stream["getitem"] == "1"  # getitem: its input's
    assert stream["mm"] is None and stream["add"] is None
    a, b = torch.randn(3, 3), torch.randn(3, 4)
    assert torch.equal(scoped(a, b), gm(a, b))


def test_a_dynamic_graph_needs_enable_dynamic_shape_multi_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    g = _diamond()
    g.node("Abs").meta["outputs"] = [{"name": "y", "dtype": 0, "shape": [-1, 4]}]
    monkeypatch.delenv("ENABLE_DYNAMIC_SHAPE_MULTI_STREAM", raising=False)
    assert build(_serialized(g), {OPTION: "LoadBalance:2"}, "graph_1") is None
    monkeypatch.setenv("ENABLE_DYNAMIC_SHAPE_MULTI_STREAM", "1")
    built = build(_serialized(g), {OPTION: "LoadBalance:2"}, "graph_1")
    assert built is not None and built.allocation.streams == [0, 1]

"""Selecting collectives in YAML passes: ``collective: all_reduce`` (or ``target``) picks each
collective, and its group takes its ``wait_tensor``, so a stream scope spans both."""

from __future__ import annotations

import pytest

from airctl.errors import SpecError
from airctl.passes.builtin import build
from airctl.passes.select import groups, near_misses, node_infos, select
from airctl.passes.spec import Selector, parse_text


def comm_gm(torch, layers: int = 2):
    """Per layer: mm, relu, all_reduce(relu), wait_tensor; the waits' results summed at the end."""
    import torch.fx as fx

    g = fx.Graph()
    x = g.placeholder("x")
    h, outs = x, []

    def call(target, args, name):
        return g.create_node("call_function", target, args, name=name)

    for k in range(layers):
        tail = f"_{k}" if k else ""  # mm, mm_1, ... as FX names them
        h = call(torch.ops.aten.relu.default, (call(torch.ops.aten.mm.default, (h, h), f"mm{tail}"),), f"relu{tail}")
        r = call(torch.ops._c10d_functional.all_reduce.default, (h, "sum", "0"), f"all_reduce{tail}")
        outs.append(call(torch.ops._c10d_functional.wait_tensor.default, (r,), f"wait_tensor{tail}"))
    g.output(call(torch.ops.aten.stack.default, (outs,), "stack"))
    return fx.GraphModule(torch.nn.Module(), g)


def names(found) -> list[str]:
    return [i.name for i in found]


def test_collective_kind_matches_and_each_group_holds_its_wait(torch_air) -> None:
    infos = node_infos(comm_gm(torch_air).graph)
    sel = Selector(collective=["all_reduce"])
    found = select(sel, infos)
    assert names(found) == ["all_reduce", "all_reduce_1"]
    assert [names(g) for g in groups(found, sel, True)] == [["all_reduce", "wait_tensor"],
                                                            ["all_reduce_1", "wait_tensor_1"]]
    assert names(select(Selector(collective=["any"]), infos)) == ["all_reduce", "all_reduce_1"]
    assert select(Selector(collective=["all_gather"]), infos) == []
    # target selects the op itself (no wait added): the existing selector works on collectives too
    tsel = Selector(target=["_c10d_functional.all_reduce"])
    assert [names(g) for g in groups(select(tsel, infos), tsel, True)] == [["all_reduce"], ["all_reduce_1"]]


def test_a_missed_collective_lists_the_collectives_there_are(torch_air) -> None:
    miss = near_misses(Selector(collective=["all_to_all"]), node_infos(comm_gm(torch_air).graph))
    assert miss.message() == "selector (collective all_to_all) matched no node"
    assert "all_reduce (2 node(s), e.g. all_reduce" in miss.hint()


def test_the_schema_knows_the_kinds() -> None:
    spec = parse_text("version: 1\npasses:\n  - {name: s, kind: stream_scope, stream: comm, "
                      "select: {collective: [all_reduce, broadcast]}, each: true}\n")
    assert spec.passes[0].selectors["select"].collective == ["all_reduce", "broadcast"]
    with pytest.raises(SpecError, match="must be one of all_reduce, all_gather") as e:
        parse_text("version: 1\npasses:\n  - {name: s, kind: record, after: {collective: allreduce}}\n")
    assert "did you mean 'all_reduce'" in e.value.hint


def test_a_comm_stream_scope_spans_each_collective_and_its_wait(torch_air) -> None:
    gm = comm_gm(torch_air)
    spec = parse_text("version: 1\npasses:\n  - {name: s, kind: stream_scope, stream: comm, record: true, "
                      "select: {collective: all_reduce}, each: true}\n").passes[0]
    build(spec)(gm, [], None)
    from airctl.io.fx_reader import read_fx

    streams = {n.name: n.stream for n in read_fx(gm).nodes}
    assert streams["all_reduce"] == streams["wait_tensor"] == streams["all_reduce_1"] == "comm"
    assert streams["mm_1"] is None and streams["stack"] is None  # the next layer stays on the default stream


@pytest.mark.slow
def test_comm_stream_pass_is_clean_and_without_its_wait_races(tmp_path) -> None:
    """passes/comm_stream.yaml on fixtures/models/ddp_overlap.py in a world of one (reduce-overhead: no
    automatic sync of cross-stream data edges): results match eager and nothing races; without the
    wait before the final sum, the verifier and the executor both report the reads of the all-reduces."""
    import torch.distributed as dist

    from airctl.ledger.defaults import Request
    from airctl.ledger.reader import Ledger
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.verify import verify
    from tests.conftest import MODELS
    from tests.passes.conftest import FIXTURES, PASSES

    try:
        def compiled(passes):
            result = compile_model(CompileRequest.of(MODELS / "ddp_overlap.py", mode="reduce-overhead",
                                                     out_dir=tmp_path, backend="sim", passes_file=str(passes)))
            ledger = Ledger.open(result.ledger_dir)
            graph = ledger.load(ledger.default_stage(Request.CHECK, ledger.graph_ids()[0]))
            return result, graph

        good, graph = compiled(PASSES / "comm_stream.yaml")
        assert good.error is None and good.execution.matches_eager and good.races == []
        assert {n.name: n.stream for n in graph.nodes}["all_reduce_3"] == "comm"
        assert [f for f in verify(graph, "reduce-overhead") if f.severity == "error"] == []
        racy, graph = compiled(FIXTURES / "comm_stream_no_wait.yaml")
        races = {tuple(f.nodes) for f in verify(graph, "reduce-overhead") if f.rule == "race_cross_stream_without_wait"}
        assert ("stack", "wait_tensor_3") in races or ("wait_tensor_3", "stack") in races
        assert any(r["reader"] == "stack" for r in racy.races)  # seen at run time too
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()

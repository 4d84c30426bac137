"""Acceptance for `airctl compile` (issue #2): every fixture, both modes, every stage, eager parity."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO, ledger_json, ledger_text

FIXTURES = ["seed", "transformer", "train", "graph_break", "convnet"]
MODES = ["max-autotune", "reduce-overhead"]
FX_PASSES = {
    "max-autotune": ["optimize_noop_ops", "recover_view_inplace_pattern", "optimize_sym_input",
                     "apply_pattern_passes", "view_to_reshape"],
    "reduce-overhead": ["optimize_noop_ops", "recover_view_inplace_pattern", "apply_pattern_passes",
                        "view_to_reshape"],
}
ACLGRAPH_PASSES = ["apply_event_closure_with_multi_stream", "apply_event_record", "eliminate_dead_code",
                   "reinplace_inplaceable_ops_pass", "resolve_default_stream_markers"]

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("model", FIXTURES)
def test_fixture_compiles_with_every_stage_and_matches_eager(compile_fixture, model: str, mode: str) -> None:
    result = compile_fixture(model, mode)
    index = json.loads((result.ledger_dir / "index.json").read_text())
    assert index["status"] == "ok", index["error"]
    assert index["error"] is None
    assert index["backend"]["name"] == "sim"
    assert index["mode"] == mode
    assert index["execution"]["matches_eager"] is True
    assert index["execution"]["max_abs_error"] <= 1e-5
    assert index["graphs"], "no graph captured"
    for graph in index["graphs"]:
        names = [s["name"] for s in graph["stages"]]
        assert f"aot-{graph['kind']}" in names
        if graph["kind"] != "backward":
            assert names[0] == "dynamo"
        for p in FX_PASSES[mode]:
            assert f"after:{p}" in names, (p, names)
        assert "fx-final" in names
        if mode == "max-autotune":
            assert "ge-original" in names and "ge-optimized" in names
        else:
            for p in ACLGRAPH_PASSES:
                assert f"after:{p}" in names
        for stage in graph["stages"]:
            assert stage["nodes"] > 0
            snapshot = ledger_json(result.ledger_dir / stage["file"])
            assert len(snapshot["nodes"]) == stage["nodes"]


def _check_torchair_dumps(result, kinds: tuple[str, ...], last_only: tuple[str, ...] = ()) -> None:
    index = result.index.to_json()
    by_stage_type = {(d["stage"], d["type"]) for d in index["dumps"]}
    assert {d["type"] for d in index["dumps"]} == set(kinds) | set(last_only)
    for stage in ("ge-original", "ge-optimized"):
        for kind in kinds:
            assert (stage, kind) in by_stage_type, (stage, kind)
    for kind in last_only:
        assert (("ge-optimized", kind) in by_stage_type) and ("ge-original", kind) not in by_stage_type
    for dump in index["dumps"]:
        path = result.ledger_dir / dump["file"]
        assert path.parent.name == "torchair" and path.name.endswith(f".{dump['type']}.gz")
        assert path.name.startswith(("dynamo_original_graph_", "dynamo_optimized_graph_"))
        assert not path.with_suffix("").exists()  # TorchAir's uncompressed file was replaced
        text = ledger_text(path)
        if dump["type"] == "pbtxt":
            assert text.startswith("node {") and 'op: "NetOutput"' in text  # TorchAir's TF-style renderer
        elif dump["type"] == "txt":
            assert text.startswith('name: "graph_') and "op {" in text  # protobuf text of GraphDef
        else:
            assert "import ge_apis as ge" in text and "ge.NetOutput(" in text  # TorchAir's replayable py dump


@pytest.mark.parametrize("model", FIXTURES)
def test_ge_dumps_are_torchairs_own_txt_and_py(compile_fixture, model: str) -> None:
    """The default capture keeps TorchAir's txt and py dumps, and its pbtxt of the optimized GE graph
    (what `airctl dump --type pbtxt` prints); --capture full has every pbtxt."""
    _check_torchair_dumps(compile_fixture(model, "max-autotune"), ("txt", "py"), last_only=("pbtxt",))


def test_capture_full_keeps_all_three_dump_types(runs_dir) -> None:
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    result = compile_model(CompileRequest.of(REPO / "fixtures/models/seed.py", out_dir=runs_dir, backend="sim",
                                          capture="full"))
    assert result.error is None
    _check_torchair_dumps(result, ("pbtxt", "txt", "py"))


def test_reduce_overhead_keeps_aclgraph_dump_and_generated_code(compile_fixture) -> None:
    result = compile_fixture("seed", "reduce-overhead")
    stages = {d["stage"] for d in result.index.to_json()["dumps"]}
    assert {"aclgraph-original", "aclgraph-optimized", "generated-code"} <= stages
    code = next(d for d in result.index.to_json()["dumps"] if d["stage"] == "generated-code")
    assert "def forward(" in ledger_text(result.ledger_dir / code["file"])


def test_training_fixture_yields_forward_and_backward_graphs(compile_fixture) -> None:
    kinds = [g["kind"] for g in compile_fixture("train").index.to_json()["graphs"]]
    assert kinds == ["forward", "backward"]


def test_graph_break_fixture_yields_two_graphs(compile_fixture) -> None:
    graphs = compile_fixture("graph_break").index.to_json()["graphs"]
    assert [g["dynamo_graph"] for g in graphs] == [1, 2]


def test_transformer_has_a_few_hundred_aten_nodes(compile_fixture) -> None:
    graph = compile_fixture("transformer").index.to_json()["graphs"][0]
    final = next(s for s in graph["stages"] if s["name"] == "fx-final")
    assert 200 <= final["nodes"] <= 600


def test_stream_labels_reach_the_ge_graph(runs_dir) -> None:
    """A custom pass (TorchAir's docs example) shows up in the ledger stages and the GE stage."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from tests.pipeline.seed_pass import custom_pre_pass

    result = compile_model(CompileRequest.of(REPO / "fixtures/models/seed.py", out_dir=runs_dir, backend="sim",
                                          pre_pass=custom_pre_pass))
    assert result.error is None
    stages = {s["name"]: s for s in result.index.to_json()["graphs"][0]["stages"]}
    pre = stages["after:post_grad_custom_pre_pass"]
    assert pre["changed"] is True and pre["node_delta"] == 4
    ge = ledger_json(result.ledger_dir / stages["ge-original"]["file"])
    nodes = {n["name"]: n for n in ge["nodes"]}
    assert nodes["MatMul"]["stream"] == "stream_1" and nodes["Abs"]["stream"] == "stream_1"
    assert nodes["Sub"]["control_inputs"] == ["Abs"]


def test_a_conversion_that_failed_earlier_in_the_process_does_not_empty_later_py_dumps(runs_dir) -> None:
    """TorchAir counts nested GE op calls per thread and never undoes the count of an op that raised;
    its py dump keeps only depth-0 ops. Each airctl compile starts from zero, as a fresh process does."""
    import sys

    from airctl.backends.sim import sim_context
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.pipeline.run.execution import RunExecution
    from airctl.sim.session import session

    with session(sim_context(RunExecution())):
        local = sys.modules["torchair.ge._ge_graph"].local_variable
        local.auto_convert_nesting = 1  # what a converter that raised inside a GE op leaves behind
    result = compile_model(CompileRequest.of(REPO / "fixtures/models/seed.py", out_dir=runs_dir, backend="sim"))
    assert result.error is None
    py = [d for d in result.index.to_json()["dumps"] if d["type"] == "py"]
    assert py and all("ge.NetOutput(" in ledger_text(result.ledger_dir / d["file"]) for d in py)

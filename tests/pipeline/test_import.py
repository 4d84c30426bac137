"""`airctl import`: TorchAir's own files (fixtures/imports, made by the wheel under sim) become a ledger.

Fast: nothing is compiled. The comparison with `airctl compile` is test_import_parity.py (slow).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from airctl.errors import GraphReadError
from airctl.ledger.reader import Ledger
from airctl.pipeline.importing import ImportRequest, import_artifacts
from tests.conftest import ledger_text

IMPORTS = Path(__file__).resolve().parents[2] / "fixtures" / "imports"
FX_PASSES = ["after:post_grad_custom_pre_pass", "after:optimize_noop_ops", "after:recover_view_inplace_pattern",
             "after:optimize_sym_input", "after:apply_pattern_passes", "after:view_to_reshape"]
GE_PASSES = ["ge:after:optimize_sym_pack", "ge:after:remove_dead_data_and_reorder_data_index",
             "ge:after:optimize_reference_op_redundant_copy", "ge:after:mapping_assign_op_to_graph_output",
             "ge:after:explicit_order_for_side_effect_nodes", "ge:after:explicit_order_for_cmo",
             "ge:after:normalize_grouped_matmul_view", "ge:after:move_transpose_into_mm",
             "ge:after:move_mm_weight_transpose_after_bitcast"]


def _import(tmp_path: Path, *paths: Path, **kw) -> Ledger:
    result = import_artifacts(ImportRequest(list(paths), out_dir=tmp_path / "runs", report=False, **kw))
    return Ledger.open(result.ledger_dir)


def test_compile_debug_folder_gives_every_stage_in_torchair_order(tmp_path: Path) -> None:
    ledger = _import(tmp_path, IMPORTS / "ma_tcd")
    index = ledger.index
    assert (index.command, index.mode, index.status, index.model, index.execution) == (
        "import", "max-autotune", "ok", None, None)
    (graph,) = index.graphs
    assert (graph.id, graph.kind, graph.name, graph.rank, graph.dynamo_graph) == ("1-inference", "inference",
                                                                                  "graph_1", 0, 1)
    names = [s.name for s in graph.stages]
    assert names == ["dynamo", "aot-inference", *FX_PASSES, "fx-final", "ge-original", *GE_PASSES, "ge-optimized"]
    changed = {s.name: s.changed for s in graph.stages}
    assert changed["after:post_grad_custom_pre_pass"] is True and changed["after:optimize_noop_ops"] is False
    assert graph.stages[3].file == graph.stages[2].file  # an unchanged pass shares its predecessor's snapshot
    assert graph.stages[2].seconds is not None  # pass times from the log's tables
    assert graph.stages[0].imported_from.endswith("model__0/dynamo_out_graph.txt")
    assert ":" in graph.stages[8].imported_from and "debug.log" in graph.stages[8].imported_from  # fx-final: log:line
    final = ledger.load(ledger.find_stage("fx-final"))
    assert {n.name: n.stream for n in final.nodes if n.stream} == {
        "mm": "stream_1", "abs_1": "stream_1", "record_default": "stream_1", "scope_exit_default": "stream_1"}
    ge = ledger.load(ledger.find_stage("ge-optimized"))
    assert [(n.name, n.control_inputs) for n in ge.nodes if n.control_inputs] == [("Sub", ["Abs"])]
    assert {d.stage for d in index.dumps} == {"ge-original", "ge-optimized"} and all(
        (ledger.root / d.file).is_file() and d.rank == 0 and d.source for d in index.dumps)
    assert ledger_text(ledger.root / index.log).startswith("[")  # TorchAir's debug.log, once, compressed
    assert index.log.endswith(".gz") and not (ledger.root / "log.txt").exists()
    assert index.imported["torch_compile_debug"] and index.imported["problems"] == []


@pytest.mark.parametrize("folder", ["ma_txt", "ma_py"])
def test_stdout_log_and_dumps_give_what_they_show(tmp_path: Path, folder: str) -> None:
    ledger = _import(tmp_path, IMPORTS / folder)
    (graph,) = ledger.index.graphs
    # no TORCH_COMPILE_DEBUG: no Dynamo graph and no GE pass stages; the FX passes come from the log's
    # listings and pass tables (the custom pass is listed; the others reported no change)
    assert [s.name for s in graph.stages] == ["aot-inference", *FX_PASSES, "fx-final", "ge-original", "ge-optimized"]
    assert [s.changed for s in graph.stages[1:7]] == [True, False, False, False, False, False]
    ge = ledger.load(ledger.find_stage("ge-original"))
    if folder == "ma_txt":
        assert ge.get("Sub").control_inputs == ["Abs"] and ge.get("MatMul").stream == "stream_1"
    else:  # TorchAir's py dump has neither control edges nor scope attributes (docs/import.md)
        assert ge.get("Sub").control_inputs == [] and ge.get("MatMul").stream is None


def test_reduce_overhead_compile_debug_gives_the_aclgraph_passes(tmp_path: Path) -> None:
    ledger = _import(tmp_path, IMPORTS / "ro_tcd")
    (graph,) = ledger.index.graphs
    assert ledger.index.mode == "reduce-overhead"
    names = [s.name for s in graph.stages]
    assert names.index("fx-final") < names.index("after:apply_event_closure_with_multi_stream")
    assert names[-1] == "after:resolve_default_stream_markers"
    stages = {d.stage for d in ledger.index.dumps}
    assert stages == {"aclgraph-original", "aclgraph-optimized", "generated-code"}
    final = ledger.load(ledger.stages()[-1])
    assert any(n.op.startswith("air.tagged_event_record") for n in final.nodes)
    # verify-each ran on the imported pass stages: the docs pass races in aclgraph (add reads abs_1 before the wait)
    assert {(f["rule"], tuple(f["nodes"])) for f in ledger.index.findings} == {
        ("race_cross_stream_without_wait", ("abs_1", "add"))}


def test_several_ranks_get_their_own_graphs(tmp_path: Path) -> None:
    ranks = tmp_path / "job"
    for rank, pid in ((0, 100), (1, 101)):
        for dump in (IMPORTS / "ma_txt" / "graph_dump").iterdir():
            name = dump.name.replace("rank_0", f"rank_{rank}").replace("pid_", f"pid_{pid}")
            (ranks / f"rank{rank}").mkdir(parents=True, exist_ok=True)
            shutil.copy(dump, ranks / f"rank{rank}" / name)
    ledger = _import(tmp_path, ranks)
    assert [(g.id, g.rank, g.name) for g in ledger.index.graphs] == [
        ("rank0-1-inference", 0, "graph_1"), ("rank1-1-inference", 1, "graph_1")]
    assert ledger.index.imported["ranks"] == [0, 1]
    assert {d.rank for d in ledger.index.dumps} == {0, 1} and len(ledger.index.dumps) == 4


def test_a_saved_listing_alone_imports_and_checks(tmp_path: Path) -> None:
    listing = IMPORTS.parent / "checks" / "listings" / "record_before_any_op.txt"
    ledger = _import(tmp_path, listing)
    (graph,) = ledger.index.graphs
    assert [s.name for s in graph.stages] == ["fx-listing"]
    from airctl.pipeline.check import check_source

    outcome = check_source(ledger.root)
    assert [f.rule for f in outcome.findings] == ["record_before_any_op"]


def test_unreadable_files_are_problems_not_failures(tmp_path: Path) -> None:
    folder = tmp_path / "copied"
    shutil.copytree(IMPORTS / "ma_txt", folder)
    (optimized,) = (folder / "graph_dump").glob("dynamo_optimized_*")
    optimized.write_text('op {\n  name: "Sub"\n  input: "Missing:0"\n}\n')
    ledger = _import(tmp_path, folder)
    (problem,) = ledger.index.imported["problems"]
    assert optimized.name in problem and "Missing" in problem
    assert [s.name for s in ledger.index.graphs[0].stages][-1] == "ge-original"  # the rest is kept


def test_nothing_to_import_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(GraphReadError) as info:
        import_artifacts(ImportRequest([tmp_path], out_dir=tmp_path / "runs"))
    assert "no TorchAir log" in info.value.message and info.value.hint
    with pytest.raises(GraphReadError):
        import_artifacts(ImportRequest([tmp_path / "absent"], out_dir=tmp_path / "runs"))


def test_a_ledger_inside_the_folder_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "copied"
    shutil.copytree(IMPORTS / "ma_txt", folder)
    first = _import(tmp_path, folder)
    shutil.copytree(first.root, folder / "airctl-runs" / first.root.name)
    again = _import(tmp_path, folder)
    assert [g.id for g in again.index.graphs] == ["1-inference"]
    assert any("airctl ledger" in s for s in again.index.imported["skipped"])


def test_the_imported_index_round_trips(tmp_path: Path) -> None:
    ledger = _import(tmp_path, IMPORTS / "ma_tcd")
    data = json.loads(ledger.index_path.read_text())
    assert ledger.index.to_json() == data and data["graphs"][0]["stages"][0]["imported_from"]


def test_training_with_a_graph_break_pairs_backward_graphs_in_reverse(tmp_path: Path) -> None:
    """TorchAir compiles the backward graphs lazily, last forward first, and files both under the last
    model__K/backward (the later overwriting the earlier): graph_3 takes its stages from the log instead."""
    ledger = _import(tmp_path, IMPORTS / "train_tcd")
    assert [(g.id, g.name) for g in ledger.index.graphs] == [
        ("1-forward", "graph_1"), ("2-forward", "graph_2"), ("2-backward", "graph_3"), ("1-backward", "graph_4")]
    second, first = ledger.index.graph("2-backward"), ledger.index.graph("1-backward")
    assert "overwritten by graph_4" in second.notes[0]
    assert "debug.log:" in second.stages[0].imported_from
    assert first.stages[0].imported_from.endswith("model__1/backward/000_aot_backward_graph.txt")


@pytest.mark.parametrize("keep", ["compile-debug-without-log", "dumps-only"])
def test_training_graphs_link_without_a_log(tmp_path: Path, keep: str) -> None:
    """No log: TCD folders link to dumps by the bytes of their GE graph, and the AOT input names in the
    dumps (primals_N, tangents_N) tell forward from backward."""
    folder = tmp_path / "copied"
    shutil.copytree(IMPORTS / "train_tcd", folder)
    for log in folder.rglob("debug.log"):
        log.unlink()
    if keep == "dumps-only":
        shutil.rmtree(folder / "torch_compile_debug")
    ledger = _import(tmp_path, folder)
    assert [(g.id, g.name) for g in ledger.index.graphs] == [
        ("1-forward", "graph_1"), ("2-forward", "graph_2"), ("2-backward", "graph_3"), ("1-backward", "graph_4")]
    if keep != "dumps-only":
        assert "by the bytes of its original GE graph" in ledger.index.graph("1-backward").notes[0]


def test_a_ledger_of_ge_dumps_alone_is_checked_on_its_ge_graph(tmp_path: Path) -> None:
    folder = tmp_path / "graph_dump"
    folder.mkdir()
    shutil.copy(IMPORTS.parent / "checks" / "dumps" / "scope_args_not_lists.txt",
                folder / "dynamo_original_graph_1_rank_0_pid_7_ts_20260101000000000000.txt")
    ledger = _import(tmp_path, folder)
    assert [s.name for s in ledger.index.graphs[0].stages] == ["ge-original"]
    from airctl.pipeline.check import check_source

    outcome = check_source(ledger.root)
    assert [(g.label, [f.rule for f in g.findings]) for g in outcome.graphs] == [
        ("1-inference/ge-original", ["scope_args_not_lists"])]


def test_npugraph_ex_compile_debug_folder_imports_in_its_mode_with_its_stream_ops(tmp_path: Path) -> None:
    """npugraph_ex writes TORCH_COMPILE_DEBUG under ``npugraph_ex/`` and logs as NPUGRAPH_EX (issue 30)."""
    ledger = _import(tmp_path, IMPORTS / "nx_tcd")
    index = ledger.index
    assert (index.mode, index.status) == ("npugraph_ex", "ok")
    (graph,) = index.graphs
    names = [s.name for s in graph.stages]
    for p in ("post_grad_custom_pre_pass", "apply_event_closure_with_multi_stream", "reinplace_inplaceable_ops_pass"):
        assert f"after:{p}" in names
    assert [d.stage for d in index.dumps] == ["generated-code"]
    assert index.to_json()["imported"]["logs"][0]["source"].endswith("npugraph_ex/debug.log")
    final = ledger.load(ledger.stages()[-1])
    assert {"npugraph_ex.scope_enter.default", "npugraph_ex.wait.default",
            "npugraph_ex.tagged_event_record.default"} <= {n.op for n in final.nodes}
    # the docs pass waits before sub only: aclgraph semantics, found under npugraph_ex's name
    assert {(f["rule"], f["mode"], tuple(f["nodes"])) for f in index.findings} == {
        ("race_cross_stream_without_wait", "npugraph_ex", ("abs_1", "add"))}

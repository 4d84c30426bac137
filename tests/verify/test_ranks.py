"""Rank divergence (``airctl check`` on a multi-rank ledger): the first collective the ranks disagree
on, from their compiled graphs and from what they issued at run time. Ledgers built by hand."""

from __future__ import annotations

from pathlib import Path

from airctl.graph.model import Graph, Node
from airctl.ledger.collectives import Collective, CollectiveLog
from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.check import check_source
from airctl.verify.ranks import first_issued_difference

AR, AG = "_c10d_functional.all_reduce.default", "_c10d_functional.all_gather_into_tensor.default"
WAIT = "_c10d_functional.wait_tensor.default"
TENSOR = {"tensors": [{"shape": [4, 2], "dtype": "float32"}]}


def _c(seq: int, kind: str, stream: str = "default", shape: tuple = (4, 2), node: str = "n") -> Collective:
    return Collective(seq, "graph_1", node, "op", kind, stream, list(shape), "float32", "0", "graph", 0.0)


def test_the_first_differing_position_names_every_rank() -> None:
    same = [_c(0, "all_reduce")]
    diff = first_issued_difference({0: same + [_c(1, "all_reduce", node="a")],
                                    1: same + [_c(1, "all_gather", node="b")]})
    assert diff.position == 1
    assert "rank 0 all_reduce [4x2]" in diff.message() and "rank 1 all_gather [4x2]" in diff.message()
    assert "collective #1 issued at run time" in diff.message()


def test_shape_stream_and_length_differences_count_p2p_does_not() -> None:
    assert first_issued_difference({0: [_c(0, "all_reduce")], 1: [_c(0, "all_reduce", shape=(8, 2))]}).position == 0
    assert first_issued_difference({0: [_c(0, "all_reduce")], 1: [_c(0, "all_reduce", stream="comm")]}) is not None
    extra = first_issued_difference({0: [_c(0, "all_reduce"), _c(1, "all_reduce")], 1: [_c(0, "all_reduce")]})
    assert extra.position == 1 and extra.at[1] is None and "issues nothing" in extra.message()
    # rank 0 sends what rank 1 receives: different by design, not a divergence
    assert first_issued_difference({0: [_c(0, "send"), _c(1, "all_reduce")],
                                    1: [_c(0, "recv"), _c(1, "all_reduce")]}) is None
    assert first_issued_difference({0: [_c(0, "all_reduce")]}) is None  # one rank: nothing to compare


def _graph(kind_op: str, name: str, stream: str | None = None) -> Graph:
    return Graph("graph_1", "fx", [
        Node("x", "placeholder", kind="placeholder", meta=TENSOR),
        Node(name, kind_op, inputs=["x"], kind="call_function", stream=stream, meta=TENSOR),
        Node("wait_tensor", WAIT, inputs=[name], kind="call_function", stream=stream, meta=TENSOR),
        Node("output", "output", inputs=["wait_tensor"], kind="output")])


def multi_rank_ledger(root: Path, graphs: dict[int, list[Graph]], issued: dict[int, list[str]]) -> Path:
    top = LedgerWriter.create(root, "ddp", command="run", world_size=len(graphs), ranks=[])
    for rank, rank_graphs in graphs.items():
        w = LedgerWriter.create_at(top.root / "ranks" / str(rank), command="run", mode="max-autotune", rank=rank)
        for k, g in enumerate(rank_graphs, start=1):
            w.graph(f"{k}-inference", "inference")
            w.add_stage(f"{k}-inference", "fx-final", g)
        w.finish()
        log = CollectiveLog(w.root / "collectives.jsonl")
        for kind in issued.get(rank, []):
            log.done(log.issue(graph="graph_1", node=kind, op="op", kind=kind, stream="default", shape=[4, 2],
                               dtype="float32", group="0"))
        log.close()
    top.set(ranks=[{"rank": r, "status": "ok", "exit_code": 0, "ledger": f"ranks/{r}"} for r in graphs])
    top.finish()
    return top.root


def test_check_on_a_multi_rank_ledger_reports_the_branch_one_rank_took(tmp_path: Path) -> None:
    top = multi_rank_ledger(tmp_path, {0: [_graph(AR, "all_reduce")], 1: [_graph(AG, "all_gather_into_tensor")]},
                            {0: ["all_reduce"], 1: ["all_gather"]})
    outcome = check_source(top)
    labels = [g.label for g in outcome.graphs]
    assert labels[:2] == ["rank 0/1-inference/fx-final", "rank 1/1-inference/fx-final"]
    found = [f for f in outcome.findings if f.rule == "rank_divergence"]
    assert len(found) == 2 and outcome.count("error") == 2
    compiled, issued = found
    assert compiled.message.startswith("ranks diverge at collective #0 of graph 1-inference: rank 0 all_reduce")
    assert "rank 1 all_gather [4x2] float32 (graph 1-inference, node all_gather_into_tensor" in compiled.message
    assert compiled.nodes == ["all_reduce", "all_gather_into_tensor"]
    assert issued.message.startswith("ranks diverge at collective #0 issued at run time")
    assert "if rank ==" in issued.hint


def test_the_same_collectives_on_every_rank_pass_and_a_graph_only_one_rank_compiled_fails(tmp_path: Path) -> None:
    same = multi_rank_ledger(tmp_path / "a", {0: [_graph(AR, "all_reduce")], 1: [_graph(AR, "all_reduce")]},
                             {0: ["all_reduce"], 1: ["all_reduce"]})
    assert check_source(same).count("error") == 0
    extra = multi_rank_ledger(tmp_path / "b", {0: [_graph(AR, "all_reduce"), _graph(AR, "all_reduce")],
                                               1: [_graph(AR, "all_reduce")]}, {})
    [f] = check_source(extra).findings
    assert "graph 2-inference was compiled by rank(s) 0 only, not by 1" in f.message
    moved = multi_rank_ledger(tmp_path / "c", {0: [_graph(AR, "all_reduce", "comm")], 1: [_graph(AR, "all_reduce")]},
                              {})
    [f] = check_source(moved).findings
    assert "stream comm" in f.message and "stream default" in f.message

"""A rank's collective log: written before each collective, read back into the issued sequence and
where the rank was last seen; the typed ``ranks`` entries of a multi-rank run's index."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from airctl.errors import LedgerError
from airctl.ledger.collectives import CollectiveLog, LogFollower, call_details, read_log
from airctl.ledger.index import RankEntry, RunIndex
from airctl.ledger.writer import LedgerWriter


def _issue(log: CollectiveLog, node: str, kind: str = "all_reduce", **kw) -> int:
    return log.issue(graph="graph_1", node=node, op=f"_c10d_functional.{kind}.default", kind=kind,
                     stream=kw.pop("stream", "default"), shape=[4, 2], dtype="float32", group="0", **kw)


def test_issued_sequence_and_a_rank_blocked_in_a_wait(tmp_path: Path) -> None:
    log = CollectiveLog(tmp_path / "r0" / "collectives.jsonl")
    log.graph("graph_1", "start")
    first = _issue(log, "all_reduce")
    log.done(first)
    log.wait(first, "wait_tensor", "default", "start")
    log.wait(first, "wait_tensor", "default", "end")
    second = _issue(log, "all_reduce_1", stream="comm")
    log.done(second)
    log.wait(second, "wait_tensor_1", "comm", "start")  # never returns: the peer issued something else
    log.close()
    activity = read_log(log.path)
    assert [(c.seq, c.node, c.completed, c.waited) for c in activity.issued] == [
        (0, "all_reduce", True, True), (1, "all_reduce_1", True, False)]
    last = activity.last(now=time.time() + 10)
    assert last["state"] == "blocked" and last["node"] == "wait_tensor_1" and last["stream"] == "comm"
    assert last["collective"] == 1 and last["graph"] == "graph_1" and last["since_s"] >= 10
    assert "all_reduce [4x2] float32 group 0 (graph graph_1, node all_reduce_1, stream comm)" == last["describe"]


def test_a_collective_that_never_returned_is_where_the_rank_is(tmp_path: Path) -> None:
    log = CollectiveLog(tmp_path / "collectives.jsonl")
    _issue(log, "all_gather_into_tensor", kind="all_gather", by="eager reference")
    log.close()
    last = read_log(log.path).last()
    assert last["state"] == "blocked" and last["node"] == "all_gather_into_tensor"
    assert last["graph"] == "eager reference of graph_1"


def test_finished_rank_and_empty_or_torn_logs(tmp_path: Path) -> None:
    assert read_log(tmp_path / "missing.jsonl").last() is None
    log = CollectiveLog(tmp_path / "collectives.jsonl")
    log.graph("graph_1", "start")
    log.done(_issue(log, "all_reduce"))
    log.graph("graph_1", "end")
    log.close()
    with log.path.open("a") as f:
        f.write('{"ev": "issue", "seq": 9, "gra')  # the rank was killed mid-line
    activity = read_log(log.path)
    assert len(activity.issued) == 1
    assert activity.last()["state"] == "outside compiled graphs"


def test_the_follower_reads_only_complete_new_lines(tmp_path: Path) -> None:
    path = tmp_path / "collectives.jsonl"
    follower = LogFollower(path)
    assert follower.poll().last() is None  # no file yet
    log = CollectiveLog(path)
    _issue(log, "all_reduce")
    assert len(follower.poll().issued) == 1
    with path.open("a") as f:
        f.write('{"ev": "done", "seq": 0')
    assert not follower.poll().issued[0].completed  # half a line waits
    with path.open("a") as f:
        f.write(', "t": 1.0}\n')
    assert follower.poll().issued[0].completed


def test_call_details_name_shape_dtype_and_group() -> None:
    class T:
        shape, dtype = (8, 2), "torch.bfloat16"

    assert call_details((T(), 0, "ptd:0", [0, 1], 2), {}) == {"shape": [8, 2], "dtype": "bfloat16",
                                                               "group": "ptd:0 ranks=[0, 1]"}
    assert call_details(([T(), T()], "sum", 2, "3"), {})["group"] == "3"


def test_ranks_are_typed_in_the_index(tmp_path: Path) -> None:
    w = LedgerWriter.create(tmp_path, "ddp", command="run", world_size=2, ranks=[])
    w.set(ranks=[{"rank": 0, "status": "ok", "exit_code": 0, "ledger": "ranks/0"},
                 {"rank": 1, "status": "failed", "exit_code": -6, "signal": "SIGABRT", "ledger": "ranks/1",
                  "log": {"stderr": "logs/x/attempt_0/1/stderr.log"}, "last": {"state": "blocked"}}])
    index = RunIndex.read(json.loads((w.root / "index.json").read_text()))
    assert index.is_multi_rank and all(isinstance(r, RankEntry) for r in index.ranks)
    assert (index.ranks[1].signal, index.ranks[1].log["stderr"]) == ("SIGABRT", "logs/x/attempt_0/1/stderr.log")
    assert "signal" not in index.ranks[0].to_json()  # optional keys only once set
    bad = json.loads((w.root / "index.json").read_text())
    bad["ranks"][1]["exit_code"] = "six"
    with pytest.raises(LedgerError, match="rank 1: 'exit_code' is a string, expected an integer"):
        RunIndex.read(bad)


def test_a_rank_ledger_is_created_in_exactly_its_folder(tmp_path: Path) -> None:
    w = LedgerWriter.create_at(tmp_path / "top" / "ranks" / "1", rank=1, world_size=2, command="run")
    assert w.root == tmp_path / "top" / "ranks" / "1" and w.run_index.run_id == "1"
    assert (w.run_index.rank, w.run_index.world_size) == (1, 2)
    with pytest.raises(FileExistsError):
        LedgerWriter.create_at(w.root)  # never over another ledger

"""The multi-rank launcher without launching: torchrun command lines, the rewrite into airctl's rank
worker, the top ledger's rank entries, exit codes, and the watchdog on hand-written collective logs."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import pytest

from airctl.ledger.collectives import CollectiveLog
from airctl.ledger.index import RankEntry
from airctl.ledger.reader import Ledger
from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.ranks import forks
from airctl.pipeline.ranks.launch import RanksResult, _rewrite, launcher_argv
from airctl.pipeline.ranks.status import Failure, rank_entries, rank_numbers, run_status
from airctl.pipeline.ranks.watchdog import Watchdog, describe_last
from airctl.pipeline.ranks.worker import Rank, rank_folder


def test_torchrun_command_lines_are_recognised() -> None:
    assert launcher_argv("/usr/bin/torchrun", ["--standalone", "a.py"]) == ["--standalone", "a.py"]
    assert launcher_argv("python3", ["-m", "torch.distributed.run", "a.py", "--x"]) == ["a.py", "--x"]
    assert launcher_argv("-m", ["torch.distributed.run", "a.py"]) == ["a.py"]
    assert launcher_argv(".venv/lib/python3.11/site-packages/torch/distributed/run.py", ["a.py"]) == ["a.py"]
    assert launcher_argv("python", ["-m", "other", "a.py"]) is None
    assert launcher_argv("train.py", ["torchrun"]) is None


def _parse(argv: list[str]):
    from torch.distributed import run as torchrun

    return torchrun.parse_args(argv)


def test_workers_become_airctl_rank_workers_with_their_consoles_in_the_ledger(tmp_path: Path) -> None:
    argv = ["--nproc-per-node", "2", "train.py", "--lr", "0.1"]
    args = _parse(argv)
    _rewrite(args, argv, tmp_path, None)
    assert (args.no_python, args.module, args.run_path) == (True, False, False)
    assert args.training_script_args == ["-u", "-m", "airctl.pipeline.ranks.worker", str(tmp_path)]
    assert (args.log_dir, args.tee, args.shutdown_timeout) == (str(tmp_path / "logs"), "3", 5)
    # forked ranks: torchrun starts the rank client, which names the fork server's socket and the ledger
    server = forks.Forks(0, "/tmp/airctl-ranks-x/socket", "/tmp/airctl-ranks-x", -1)
    _rewrite(args, argv, tmp_path, server)
    assert args.training_script_args == ["-I", "-S", str(forks.CLIENT), server.address, str(tmp_path)]
    # the user's own choices stay
    argv = ["--nproc-per-node", "2", "--log-dir", "/tmp/mine", "--redirects", "1", "--shutdown-timeout", "20",
            "train.py"]
    args = _parse(argv)
    _rewrite(args, argv, tmp_path, None)
    assert (args.log_dir, args.redirects, args.tee, args.shutdown_timeout) == ("/tmp/mine", "1", "0", 20)


def _rank_ledger(top: Path, rank: int, status: str | None, error: str | None = None) -> None:
    w = LedgerWriter.create_at(top / "ranks" / str(rank), command="run", rank=rank)
    if error:
        w.fail(error)
    if status:
        w.finish(status)


def test_rank_entries_finish_what_a_dead_rank_left_running(tmp_path: Path) -> None:
    _rank_ledger(tmp_path, 0, "ok")
    _rank_ledger(tmp_path, 1, None)  # gloo aborted the process (SIGABRT) mid-run
    log = CollectiveLog(tmp_path / "ranks" / "1" / "collectives.jsonl")
    log.issue(graph="graph_1", node="all_reduce", op="op", kind="all_reduce", stream="default", shape=[8, 2],
              dtype="float32", group="0")
    log.close()
    (tmp_path / "logs" / "run_x" / "attempt_0" / "1").mkdir(parents=True)
    (tmp_path / "logs" / "run_x" / "attempt_0" / "1" / "stderr.log").write_text("terminate called")
    failures = {1: Failure.of(type("F", (), {"exitcode": -6})()), 2: Failure(1)}
    assert rank_numbers(tmp_path, failures) == [0, 1, 2]  # rank 2 died before making its folder
    entries = rank_entries(tmp_path, [0, 1, 2], failures, stopped=False)
    assert [(e.rank, e.status, e.exit_code) for e in entries] == [(0, "ok", 0), (1, "failed", -6), (2, "missing", 1)]
    assert entries[1].signal == "SIGABRT" and "ended (SIGABRT) before its ledger was finished" in entries[1].error
    assert entries[1].log == {"stderr": "logs/run_x/attempt_0/1/stderr.log"}
    assert entries[1].last["state"] == "ended while blocked" and entries[1].last["node"] == "all_reduce"
    assert Ledger.open(tmp_path / "ranks" / "1").index.status == "failed"  # its own ledger says so too
    status, error = run_status(entries, None)
    assert status == "failed" and error.startswith("rank 1 failed (SIGABRT)")


def test_the_run_status_and_exit_code_follow_the_ranks(tmp_path: Path) -> None:
    ok = RankEntry(rank=0, status="ok", exit_code=0)
    mismatch = RankEntry(rank=1, status="mismatch", exit_code=3)
    stopped = RankEntry(rank=1, status="interrupted", exit_code=143)
    failed = RankEntry(rank=0, status="failed", exit_code=1, error="RuntimeError: timed out")
    assert run_status([ok, ok], None) == ("ok", None)
    assert run_status([ok, mismatch], None)[0] == "mismatch"
    assert run_status([failed, stopped], None) == ("failed", "rank 0 failed (exit code 1): RuntimeError: timed out")
    assert run_status([ok, ok], "watchdog: ...") == ("failed", "watchdog: ...")

    def result(*ranks: RankEntry, watchdog: str | None = None) -> RanksResult:
        return RanksResult(tmp_path, None, list(ranks), watchdog=watchdog)  # type: ignore[arg-type]

    assert result(ok, ok).exit_code == 0
    assert result(ok, mismatch).exit_code == 3
    assert result(failed, stopped).exit_code == 1
    assert result(ok, ok, watchdog="w").exit_code == 1


def test_a_restarted_rank_keeps_its_earlier_attempt(tmp_path: Path) -> None:
    _rank_ledger(tmp_path, 0, "failed")
    root = rank_folder(tmp_path, Rank(0, 2, 0, restart_count=1))
    assert root == tmp_path / "ranks" / "0" and not root.exists()
    assert Ledger.open(tmp_path / "ranks" / "0.attempt-0").index.status == "failed"


def test_the_watchdog_names_where_each_rank_hangs_and_signals_only_its_children(tmp_path: Path) -> None:
    then = time.time() - 30  # both ranks issued their collective 30 s ago, and neither returned
    for rank, kind in ((0, "all_reduce"), (1, "all_gather")):
        w = LedgerWriter.create_at(tmp_path / "ranks" / str(rank), command="run", pid=os.getppid())  # not a child
        events = [{"ev": "graph", "graph": "graph_1", "phase": "start", "t": then},
                  {"ev": "issue", "seq": 0, "graph": "graph_1", "node": kind, "op": f"_c10d_functional.{kind}.default",
                   "kind": kind, "stream": "comm", "shape": [4, 2], "dtype": "float32", "group": "0", "t": then}]
        (w.root / "collectives.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    said: list[str] = []
    with Watchdog(tmp_path, limit_s=5, say=said.append, grace_s=0.2, poll_s=0.05) as dog:
        deadline = time.time() + 10
        while dog.fired is None and time.time() < deadline:
            time.sleep(0.05)
    assert dog.fired is not None and "blocked in all_" in dog.fired and "stopping every rank" in dog.fired
    assert any(line.startswith("  rank 1: blocked in graph graph_1, op all_gather") for line in said)
    assert "on stream comm for 3" in describe_last(dog.last_seen[0])
    assert os.getppid() > 1  # still alive: the watchdog only signals its own children


def test_rank_from_torchrun_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "TORCHELASTIC_RESTART_COUNT": "2"}.items():
        monkeypatch.setenv(k, v)
    assert dataclasses.asdict(Rank.from_env()) == {"rank": 3, "world_size": 4, "local_rank": 1, "restart_count": 2}

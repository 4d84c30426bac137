"""Multi-rank runs end to end: two processes under torchrun on 127.0.0.1, one ledger, a ledger per rank.

Few and bounded: a data-parallel script (its two ranks fresh interpreters that import torch and
TorchAir), ranks that diverge, and a profile with communication on its own stream (their ranks
forked, :mod:`airctl.pipeline.ranks.forks`). Each checks that no process of the run is left behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from airctl.io.compressed import read_bytes
from airctl.pipeline.ranks import forks
from tests.conftest import MODELS, REPO
from tests.run.helpers import SCRIPTS, Run
from tests.warm_process import WarmProcess, start

pytestmark = pytest.mark.slow


def airctl(warm_process: WarmProcess, cwd: Path, *args: str | Path, timeout: int = 170,
           env_extra: dict[str, str] | None = None) -> Run:
    """``airctl ARGS`` forked from the warm process (tests/warm_process.py); its ranks are torchrun's own processes."""
    env = dict(os.environ, **(env_extra or {}))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # 127.0.0.1 only
    child = start(warm_process, list(args), cwd, env, cwd).finish(timeout, f"airctl {args}")
    return Run(child.returncode, child.stdout, child.stderr, cwd)


def leftovers(marker: Path) -> list[str]:
    """Processes of the run at ``marker`` still there: those whose command line names it (rank
    clients, fresh ranks), its fork server and the ranks forked from it (pids from the ledgers)."""
    found = []
    launcher = json.loads((marker / "index.json").read_text()).get("launcher") or {}
    pids = [launcher.get("fork_server_pid")] + [json.loads(p.read_text()).get("pid")
                                                for p in marker.glob("ranks/*/index.json")]
    for pid in filter(None, pids):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            found.append(f"{pid}: still running")
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(marker) in cmd:
                found.append(f"{proc.name}: {cmd}")
    return found


def rank_index(top: Path, rank: int) -> dict:
    return json.loads((top / "ranks" / str(rank) / "index.json").read_text())


def test_ddp_script_runs_on_two_ranks_each_matching_eager(tmp_path: Path, warm_process: WarmProcess) -> None:
    """Here each rank is a fresh interpreter (the path of the npu backend); the other tests fork them."""
    run = airctl(warm_process, tmp_path, "run", "--backend", "sim", "python", "-m", "torch.distributed.run",
                 "--nproc-per-node", "2", SCRIPTS / "ddp.py", env_extra={forks.ENV: "0"})
    assert run.returncode == 0, run.stderr[-3000:]
    top = run.ledger
    index = run.index
    assert index["launcher"]["ranks_started"] == f"fresh interpreters ({forks.ENV}=0)"
    assert (index["command"], index["world_size"], index["status"]) == ("run", 2, "ok")
    assert [(r["rank"], r["status"], r["exit_code"], r["ledger"]) for r in index["ranks"]] == [
        (0, "ok", 0, "ranks/0"), (1, "ok", 0, "ranks/1")]
    for r in (0, 1):
        assert f"rank {r}/2: out.sum=" in (top / index["ranks"][r]["log"]["stdout"]).read_text()
        own = rank_index(top, r)
        assert (own["rank"], own["world_size"], own["status"]) == (r, 2, "ok")
        assert own["execution"]["matches_eager"] is True and own["execution"]["graphs_checked"] == 1
        [graph] = own["graphs"]
        ge = next(s for s in graph["stages"] if s["name"] == "ge-original")
        ge_json = json.loads(read_bytes(top / "ranks" / str(r) / ge["file"]))  # the ledger's .json.gz
        hcom = [n for n in ge_json["nodes"] if n["op"] == "HcomAllReduce"]
        assert len(hcom) == 2  # dist.all_reduce and funcol.all_reduce
        groups = {n["attrs"].get("group") for n in hcom}
        assert groups == {"tag=ptd:0;rank_list=0,1"}  # both ranks, one group (an HCCL comm name on an NPU)
        issued = [json.loads(line) for line in (top / "ranks" / str(r) / "collectives.jsonl").read_text().splitlines()]
        assert [e["by"] for e in issued if e["ev"] == "issue"] == ["eager reference"] * 2 + ["graph"] * 2
    assert index["divergence"] == []
    check = airctl(warm_process, tmp_path, "check", top)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "rank 1/1-inference/fx-final" in check.stdout and "collectives compared" in check.stdout
    assert leftovers(top) == []


def test_diverging_ranks_are_stopped_and_check_names_the_first_differing_collective(tmp_path: Path,
                                                                                   warm_process: WarmProcess) -> None:
    # the script sets a 10-minute collective timeout of its own: airctl's watchdog has to stop the ranks
    run = airctl(warm_process, tmp_path, "run", "--backend", "sim", "--watchdog", "5", "torchrun",
                 "--nproc-per-node", "2",
                 SCRIPTS / "diverge.py", env_extra={"DIVERGE_PG_TIMEOUT": "600"})
    assert run.returncode == 1, run.stderr[-3000:]
    top = run.ledger
    assert "watchdog: rank" in run.stderr and "stopping every rank" in run.stderr
    for r, kind in ((0, "all_reduce"), (1, "all_gather")):  # each rank's last graph, op and stream
        assert f"rank {r}: blocked in eager reference of dynamo graph 1, op " in run.stderr
        assert f"{kind} [4x2] float32 group 0" in run.stderr
    index = run.index
    assert index["launcher"]["ranks_started"] == forks.FORKED
    assert index["status"] == "failed" and index["error"].startswith("watchdog:")
    assert [r["status"] for r in index["ranks"]] == ["interrupted", "interrupted"]
    [issued, compiled] = index["divergence"]
    assert issued["position"] == 0 and issued["ranks"]["0"]["kind"] == "all_reduce"
    assert issued["ranks"]["1"]["kind"] == "all_gather"
    assert "graph 1-inference" in compiled["message"]
    check = airctl(warm_process, tmp_path, "check", top, "--json")
    assert check.returncode == 1
    found = [f for f in json.loads(check.stdout)["findings"] if f["rule"] == "rank_divergence"]
    assert any(f["message"].startswith("ranks diverge at collective #0 of graph 1-inference: rank 0 all_reduce")
               and "rank 1 all_gather" in f["message"] and f["nodes"] == ["all_reduce", "all_gather_into_tensor"]
               for f in found), found
    assert leftovers(top) == []


def test_profile_two_ranks_with_the_comm_stream_pass(tmp_path: Path, warm_process: WarmProcess) -> None:
    run = airctl(warm_process, tmp_path, "profile", MODELS / "ddp_overlap.py", "--backend", "sim", "--nproc", "2",
                 "--passes",
                 REPO / "passes" / "comm_stream.yaml", "--steps", "2", "--warmup", "0", "--json")
    assert run.returncode == 0, run.stderr[-3000:]
    doc = json.loads(run.stdout)
    assert [r["rank"] for r in doc["ranks"]] == [0, 1] and doc["status"] == "ok"
    for r in doc["ranks"]:
        assert r["comm_s"] > 0 and r["compute_s"] > 0 and r["comm_ops"] == 4 and r["races"] == []
        assert set(r["streams"]) == {"default", "comm"} and 0 <= r["overlap_pct"] <= 100
    assert any(r["overlap_s"] > 0 for r in doc["ranks"])  # the all-reduces run beside the next block
    trace = json.loads(Path(doc["trace"]).read_text())
    names = {(e["pid"], e["args"]["name"]) for e in trace["traceEvents"] if e["ph"] == "M"
             and e["name"] in ("process_name", "thread_name")}
    assert names == {(1, "rank 0 (max-autotune)"), (2, "rank 1 (max-autotune)"), (1, "stream default"),
                     (1, "stream comm"), (2, "stream default"), (2, "stream comm")}
    top = Path(doc["ledger"])
    assert json.loads((top / "index.json").read_text())["launcher"]["ranks_started"] == forks.FORKED
    check = airctl(warm_process, tmp_path, "check", top)
    assert check.returncode == 0, check.stdout + check.stderr
    assert leftovers(top) == []

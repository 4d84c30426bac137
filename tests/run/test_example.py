"""Acceptance: TorchAir's documented custom-pass multi-stream script, unmodified, under ``airctl run``.

The script (kept outside the repository, in ../shared/examples) asks TorchAir for its DEBUG log,
a pbtxt dump in ./graph_dump and a profile in ./prof; all of it must appear as on an NPU, and
the ledger must hold every stage with outputs matching eager.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from airctl.io.read import read_graph
from tests.conftest import ledger_text
from tests.run.helpers import EXAMPLE, Run, airctl_run
from tests.warm_process import WarmProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory, warm_process: WarmProcess) -> Run:
    if not EXAMPLE.is_file():
        pytest.skip(f"TorchAir's example script is not at {EXAMPLE} (it lives in ../shared/examples)")
    return airctl_run(tmp_path_factory.mktemp("empty"), EXAMPLE, warm=warm_process)


def test_exits_0(example: Run) -> None:
    assert example.returncode == 0, example.stderr[-3000:]


def test_torchair_debug_log_shows_the_inserted_nodes(example: Run) -> None:
    out = example.stdout  # TorchAir's logger prints to stdout, as on an NPU
    added = next(line for line in out.splitlines() if "added nodes:" in line)
    for name in ("scope_enter_default", "record_default", "scope_exit_default", "wait_default"):
        assert name in added
    assert "Set attribute _user_stream_label: stream_1 on op: MatMul" in out
    assert "Add record-wait generated control edges: ['Abs:-1'] to op: Sub" in out
    # the same lines are teed into the ledger's log.txt
    log = (example.ledger / "log.txt").read_text()
    assert "Add record-wait generated control edges: ['Abs:-1'] to op: Sub" in log


def test_graph_dump_has_streams_and_the_control_edge(example: Run) -> None:
    dumps = sorted((example.cwd / "graph_dump").glob("dynamo_original_graph_*.pbtxt"))
    assert len(dumps) == 1
    text = dumps[0].read_text()
    assert 'input: "^Abs"' in text
    graph = read_graph(dumps[0])
    ops = {n.op: n for n in graph.nodes}
    assert ops["MatMul"].stream == "stream_1" and ops["Abs"].stream == "stream_1"
    assert ops["Sub"].stream is None and ops["Sub"].control_inputs == ["Abs"]
    # recorded in the ledger, with a copy there
    index = example.index
    sources = {Path(d["source"]).name: d for d in index["dumps"]}
    assert dumps[0].name in sources
    assert ledger_text(example.ledger / sources[dumps[0].name]["file"]) == text


def test_profile_in_the_ascend_layout(example: Run) -> None:
    (folder,) = (example.cwd / "prof").glob("*_ascend_pt")
    out = folder / "ASCEND_PROFILER_OUTPUT"
    trace = json.loads((out / "trace_view.json").read_text())
    names = {e.get("name") for e in trace["traceEvents"]}
    assert "npu_fx_compiler inference" in names  # TorchAir's own marker around the compiled call
    with open(out / "kernel_details.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    kernels = [row["Name"] for row in rows]
    assert {"aten::mm", "aten::abs", "aten::sub"} <= set(kernels)
    stream_of = {row["Name"]: row["Stream ID"] for row in rows}  # the pass put mm and abs on stream_1
    assert stream_of["aten::mm"] == stream_of["aten::abs"] == "stream_1"
    assert stream_of["aten::sub"] == stream_of["aten::add"] == "default"
    trace = json.loads((out / "trace_view.json").read_text())
    lanes = {e["args"]["name"] for e in trace["traceEvents"] if e.get("ph") == "M" and e["name"] == "thread_name"}
    assert {"Stream stream_1", "Stream default"} <= lanes
    assert (out / "op_statistic.csv").is_file() and (out / "step_trace_time.csv").is_file()
    assert [p["path"] for p in example.index["profiles"]] == [str(folder)]


def test_ledger_has_every_stage_and_outputs_match_eager(example: Run) -> None:
    index = example.index
    assert index["status"] == "ok" and index["command"] == "run" and index["mode"] == "max-autotune"
    (graph,) = index["graphs"]
    stages = [s["name"] for s in graph["stages"]]
    assert stages[:3] == ["dynamo", "aot-inference", "after:post_grad_custom_pre_pass"]
    assert {"after:view_to_reshape", "fx-final", "ge-original", "ge-optimized"} <= set(stages)
    assert stages.index("fx-final") < stages.index("ge-original") < stages.index("ge-optimized")
    pre = graph["stages"][2]
    assert pre["changed"] is True and pre["node_delta"] == 4
    assert graph["execution"]["matches_eager"] is True and graph["execution"]["checked"] is True
    assert index["execution"]["matches_eager"] is True

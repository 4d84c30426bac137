"""The typed run index: a real ledger's index.json reads and writes back unchanged, unknown keys
survive a read, the writer writes through to the typed index and refuses a key it does not know,
and the nested objects (index_parts.py) are checked on read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airctl.errors import LedgerError
from airctl.ledger.index import DumpEntry, GraphEntry, RunIndex, StageEntry
from airctl.ledger.reader import Ledger
from airctl.ledger.writer import LedgerWriter
from tests.ledger.test_ledger import _graph


@pytest.mark.slow
def test_real_ledger_round_trips_unchanged(compile_fixture) -> None:
    result = compile_fixture("seed")
    text = (Path(result.ledger_dir) / "index.json").read_text()
    on_disk = json.loads(text)
    index = Ledger.open(result.ledger_dir).index
    assert index.to_json() == on_disk
    # same keys, same order, byte for byte (the writer pads the file: room to rewrite it in place on a full disk)
    assert json.dumps(index.to_json(), indent=1) == text.rstrip()
    assert list(on_disk)[:6] == ["format", "version", "airctl_version", "run_id", "created", "status"]
    # typed all the way down
    graph = index.graphs[0]
    assert isinstance(graph, GraphEntry) and graph.id == "1-inference" and graph.dynamo_graph == 1
    stage = next(s for s in graph.stages if s.name == "fx-final")
    assert isinstance(stage, StageEntry) and stage.dialect == "fx" and isinstance(stage.fingerprint, str)
    assert all(isinstance(d, DumpEntry) and d.written_by == "torchair" for d in index.dumps)
    assert index.status == "ok" and index.timings["total_seconds"] > 0 and index.extra == {}
    # the view the pipeline still uses is the same JSON
    assert json.loads(json.dumps(result.index, default=lambda v: v.to_json())) == on_disk


def test_unknown_keys_survive_a_read_write_round_trip() -> None:
    data = {
        "format": "airctl-ledger", "version": 2, "future_run_key": {"a": [1, 2]},
        "graphs": [{"id": "1-inference", "kind": "inference", "future_graph_key": 7,
                    "stages": [{"index": 0, "name": "aot-inference", "file": "graphs/a.json",
                                "future_stage_key": "x", "extra": "a key named extra"}]}],
        "dumps": [{"file": "torchair/a.pbtxt", "future_dump_key": None}],
    }
    index = RunIndex.read(json.loads(json.dumps(data)))
    assert json.dumps(index.to_json()) == json.dumps(data)  # in the file's order
    assert index.extra == {"future_run_key": {"a": [1, 2]}}
    assert index.graphs[0].extra == {"future_graph_key": 7}
    assert index.graphs[0].stages[0].extra == {"future_stage_key": "x", "extra": "a key named extra"}
    assert index.to_json() == data  # nothing added, nothing lost: absent keys stay absent


def test_optional_keys_are_written_once_set_and_core_keys_always(tmp_path: Path) -> None:
    w = LedgerWriter.create(tmp_path, "m", command="compile", passes=None)
    index = json.loads((w.root / "index.json").read_text())
    assert index["passes"] is None  # given, so written (compile always names its pass file, or null)
    for key in ("command", "backend", "mode", "model", "graphs", "dumps", "findings", "execution", "timings",
                "error", "error_detail", "log", "report"):
        assert key in index
    for key in ("first_stage_with_finding", "report_error", "compilers", "notes"):
        assert key not in index
    w.set_findings([{"rule": "r", "graph": "g", "stage": "s"}])
    w.note("sim: switched run_eagerly on")
    w.set_timing("load_seconds", 0.12345)
    w.sync()
    index = json.loads((w.root / "index.json").read_text())
    assert index["first_stage_with_finding"] == {"r": "g:s"} and index["notes"] == ["sim: switched run_eagerly on"]
    assert index["timings"]["load_seconds"] == 0.123


def test_writer_methods_write_through_to_the_typed_index_and_the_file(tmp_path: Path) -> None:
    w = LedgerWriter.create(tmp_path, "m", command="run", mode=None)
    w.graph("1-inference", "inference", dynamo_graph=1)
    w.add_stage("1-inference", "aot-inference", _graph(1))
    path = w.root / "torchair" / "dynamo_original_graph_1.pbtxt"
    w.add_dump(path, graph="graph_1", type="pbtxt", stage="ge-original", written_by="torchair")
    w.set_timing("backend_seconds", 0.5004)
    w.update_graph("1-inference", execution={"matches_eager": True})
    w.update_dump(path, source="/elsewhere/x.pbtxt")
    w.set(warnings=["w"])
    w.sync()
    if w.run_index.mode is None:
        w.set(mode="max-autotune")
    index = w.run_index
    assert index.timings["backend_seconds"] == 0.5 and index.graphs[0].execution == {"matches_eager": True}
    assert index.dumps[0].source == "/elsewhere/x.pbtxt" and index.warnings == ["w"] and index.mode == "max-autotune"
    assert index.extra == {}
    on_disk = json.loads((w.root / "index.json").read_text())
    assert on_disk == index.to_json()
    assert "report_error" not in on_disk and on_disk["graphs"][0]["stages"][0]["name"] == "aot-inference"


def test_writer_public_lookups(tmp_path: Path) -> None:
    w = LedgerWriter.create(tmp_path, "m")
    w.graph("1-inference", "inference")
    w.add_stage("1-inference", "aot-inference", _graph(1))
    w.add_stage("1-inference", "fx-final", _graph(2), fingerprint="abc")
    w.graph("1-inference", "inference", name="graph_1")
    assert w.graph_entry("1-inference").name == "graph_1"
    assert [s.name for s in w.stages("1-inference")] == ["aot-inference", "fx-final"]
    last = w.last_stage("1-inference", "fx")
    w.sync()
    assert last is not None and last.fingerprint == "abc" and w.stage_file(last).is_file()
    assert w.last_stage("1-inference", "ge") is None and w.last_stage("2-forward") is None
    w.update_graph("1-inference", execution={"checked": True})
    w.set_error("pass `p` failed", {"type": "PassError"})
    index = json.loads((w.root / "index.json").read_text())
    assert index["graphs"][0]["execution"] == {"checked": True}
    assert index["error"] == "pass `p` failed" and index["status"] == "running"


@pytest.mark.parametrize("call", [
    lambda w: w.set(matches_eagr=True),
    lambda w: w.set(status="ok", executoin={"matches_eager": True}),
    lambda w: w.add_stage("1-inference", "aot-inference", _graph(1), pass_knd="wait"),
    lambda w: w.graph("2-forward", "forward", dynamo_grpah=2),
    lambda w: w.update_graph("1-inference", exectuion={}),
    lambda w: w.add_dump(w.root / "torchair" / "a.txt", wrtten_by="torchair"),
])
def test_the_writer_refuses_a_misspelt_key_and_writes_nothing_of_the_call(tmp_path: Path, call) -> None:
    w = LedgerWriter.create(tmp_path, "m", command="compile")
    w.graph("1-inference", "inference")
    w.sync()
    before = (w.root / "index.json").read_text()
    with pytest.raises(TypeError, match=r"LedgerWriter\.\w+\(\) got an unknown \w+ key '\w+'"):
        call(w)
    w.sync()
    assert (w.root / "index.json").read_text() == before  # not half-set: `status` of the second call too


def test_a_misspelt_key_names_the_key_it_resembles(tmp_path: Path) -> None:
    w = LedgerWriter.create(tmp_path, "m")
    with pytest.raises(TypeError) as e:
        w.set(eror_detail={"type": "X"})
    assert "'eror_detail' (did you mean 'error_detail'?)" in str(e.value)
    with pytest.raises(TypeError, match="LedgerWriter.create"):
        LedgerWriter.create(tmp_path, "m", comand="compile")


def test_nested_objects_are_typed_and_checked_on_read() -> None:
    data = {"graphs": [], "execution": {"matches_eager": "yes", "races": []}}
    with pytest.raises(LedgerError, match="'execution.matches_eager' is a string, expected a boolean"):
        RunIndex.read(data)
    data = {"graphs": [], "model": {"path": "m.py", "argv": ["m.py", 3]}}
    with pytest.raises(LedgerError, match=r"'model.argv'\[1\] is a number, expected a string"):
        RunIndex.read(data)
    data = {"graphs": [], "execution": {"matches_eager": True, "races": [{"graph": "1-inference", "later": 1}]},
            "findings": [{"rule": "R3", "nodes": ["a"], "future": {}}], "backend": {"name": "sim", "new": 2}}
    index = RunIndex.read(json.loads(json.dumps(data)))
    assert index.execution == data["execution"] and index.to_json() == data  # unknown nested keys kept as read

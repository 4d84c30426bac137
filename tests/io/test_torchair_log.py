"""TorchAir's DEBUG log: records, per-graph units, pass tables, names, edges; and file discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.errors import GraphReadError
from airctl.io.artifacts import discover
from airctl.io.log_records import iter_records
from airctl.io.torchair_log import read_torchair_log

REPO = Path(__file__).resolve().parents[2]
IMPORTS = REPO / "fixtures" / "imports"


def rec(pid: int, site: str, message: str, level: str = "DEBUG", date: str = "2026-11-23 13:26:39.559.574") -> str:
    return f"[{level}] TORCHAIR({pid},python):{date} [{site}]{pid} {message}"


LISTING = ["    %x : [num_users=1] = placeholder[target=x]",
           "    %n : [num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%x,), kwargs = {})",
           "    return (n,)"]


def test_stdout_log_of_the_docs_example() -> None:
    log = read_torchair_log(IMPORTS / "ma_txt" / "train.log")
    assert log.mode == "max-autotune" and len(log.pids) == 1 and log.options["ge.enableSingleStream"] == "false"
    (unit,) = log.units
    assert (unit.name, unit.named_by, unit.phase) == ("graph_1", "log", "forward")
    assert [x.site for x in unit.listings] == ["aot", "before:post_grad_custom_pre_pass",
                                               "after:post_grad_custom_pre_pass", "fx-final"]
    custom, *rest = unit.passes
    assert (custom.name, custom.nodes_before, custom.nodes_after, custom.changed) == (
        "post_grad_custom_pre_pass", 6, 10, True)
    assert sorted(custom.added) == ["record_default", "scope_enter_default", "scope_exit_default", "wait_default"]
    assert [t.changed for t in rest] == [False] * 5 and all(t.seconds is not None for t in unit.passes)
    assert [(e.kind, e.refs, e.where) for e in unit.control_edges] == [("push", ["Abs:-1"], "None"),
                                                                        ("add", ["Abs:-1"], "Sub")]
    assert unit.scope_pushes[0][1] == "{'_user_stream_label': 'stream_1'}"


def test_units_split_by_process_and_pipeline_order(tmp_path: Path) -> None:
    lines = [
        "torch's own output before any record",
        rec(7, "npu_fx_compiler.py:720", "  graph: graph():", level="INFO"), *LISTING,
        rec(8, "npu_fx_compiler.py:720", "  graph: graph():", level="INFO"), *LISTING,  # another process
        "user print() output between records",
        rec(7, "npu_fx_compiler.py:387", "after fx graph optimization, graph is graph():"), *LISTING,
        "a print right after a listing",
        rec(7, "utils.py:385", "Get graph graph_5 input placements [0].", level="INFO"),
        rec(7, "npu_fx_compiler.py:720", "  graph: graph():", level="INFO"), *LISTING,  # the next graph of pid 7
        rec(7, "npu_fx_compiler.py:387", "after fx graph optimization, graph is graph():"), *LISTING,
        rec(8, "npu_fx_compiler.py:387", "after fx graph optimization, graph is graph():", date="2026-11-23-13:26:39."
            "559.574"), *LISTING[:2],  # a C++-style date; a listing cut short
    ]
    path = tmp_path / "mixed.log"
    path.write_text("\n".join(lines) + "\n")
    log = read_torchair_log(path)
    assert log.records == 7 and log.pids == [7, 8]
    assert [(u.pid, u.name, u.named_by) for u in log.units] == [(7, "graph_5", "log"), (8, "graph_1", "order"),
                                                                (7, "graph_6", "order")]
    final = log.units[0].listing("fx-final")
    assert final.text.endswith("    return (n,)") and "a print" not in final.text and final.line == 11
    assert log.units[1].listing("fx-final").text.count("\n") == 2  # what was there, without a return


def test_records_keep_what_continues_them() -> None:
    (record,) = iter_records([rec(1, "graph_utils.py:283", "After fx graph pass(p) optimization:"),
                              "    cost 0.5s,", "", "    targets statistics:", "", "not indented"])
    assert record.indented() == ["    cost 0.5s,", "", "    targets statistics:"]


def test_discovery_sorts_files_by_what_they_are(tmp_path: Path) -> None:
    root = tmp_path / "from-npu"
    (root / "graph_dump").mkdir(parents=True)
    for dump in (IMPORTS / "ma_txt" / "graph_dump").iterdir():
        (root / "graph_dump" / dump.name).write_bytes(dump.read_bytes())
    (root / "stdout.txt").write_text((IMPORTS / "ma_txt" / "train.log").read_text())  # a log, whatever its name
    (root / "fx.txt").write_text("graph():\n" + "\n".join(LISTING) + "\n")
    (root / "notes.md").write_text("my notes\n")
    (root / "blob.bin").write_bytes(b"\0\1\2")
    (root / "prof" / "host_1_2_ascend_pt").mkdir(parents=True)
    (root / "link").symlink_to(tmp_path)
    found = discover([root])
    assert [p.name for p in found.logs] == ["stdout.txt"] and [p.name for p in found.listings] == ["fx.txt"]
    assert sorted((d.which, d.graph, d.rank, d.type) for d in found.dumps) == [
        ("optimized", "graph_1", 0, "txt"), ("original", "graph_1", 0, "txt")]
    assert [p.name for p in found.profiles] == ["host_1_2_ascend_pt"]
    assert {Path(p).name: why for p, why in found.skipped} == {
        "blob.bin": "binary", "notes.md": "not a TorchAir artifact", "link": "link or special file"}
    with pytest.raises(GraphReadError):
        discover([tmp_path / "absent"])


def test_compile_debug_tree() -> None:
    found = discover([IMPORTS / "ro_tcd" / "torch_compile_debug"])
    (run,) = found.tcd_runs
    assert run.pid is not None and run.rank is None and run.debug_log is not None
    (model,) = run.models
    assert model.k == 0 and model.dynamo is not None and model.output_code is not None
    files = model.phases["forward"]
    assert files[0].what == "graph" and files[-1].pass_name == "resolve_default_stream_markers"
    assert [f.nnn for f in files] == sorted(f.nnn for f in files)


def test_a_ledgers_gzip_compressed_torchair_dumps_are_discovered_as_dumps(tmp_path: Path) -> None:
    """A run's ``torchair/`` folder keeps TorchAir's dumps as ``.gz``: ``airctl import`` of it."""
    import gzip

    for dump in (IMPORTS / "ma_txt" / "graph_dump").iterdir():
        (tmp_path / f"{dump.name}.gz").write_bytes(gzip.compress(dump.read_bytes()))
    found = discover([tmp_path])
    assert sorted((d.which, d.graph, d.type) for d in found.dumps) == [
        ("optimized", "graph_1", "txt"), ("original", "graph_1", "txt")] and not found.skipped, found.skipped

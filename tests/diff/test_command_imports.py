"""`airctl diff A B` and `airctl check FILE` of airctl graph JSON files start as fast as they can: they
import neither torch nor GE's protobuf schema (the readers of TorchAir's text dumps import that when
such a dump is read), and they report as usual (bench/bench_diff.py and bench_check.py time them)."""

from __future__ import annotations

from pathlib import Path

from airctl.graph.model import Graph, Node
from airctl.io.json_io import write_json
from tests.command_probe import probe
from tests.conftest import REPO

MODULES = ("torch", "google.protobuf", "airctl.io.pbtxt", "airctl.io.ge_text")


def _probe(argv: list[str], cwd: Path) -> dict[str, str]:
    return probe(argv, modules=MODULES, cwd=cwd, env={"AIRCTL_WARM": "0", "PYTHONPATH": str(REPO)})


def test_diff_and_check_of_graph_files_import_neither_torch_nor_protobuf(tmp_path: Path) -> None:
    old = Graph("g", "ge", [Node("x", "Data"), Node("y", "Abs", inputs=["x:0"])])
    new = Graph("g", "ge", [Node("x", "Data"), Node("y", "Neg", inputs=["x:0"])])
    write_json(old, tmp_path / "a.json")
    write_json(new, tmp_path / "b.json")
    diff = _probe(["diff", "a.json", "b.json"], tmp_path)
    assert diff["IMPORTED"] == "" and diff["EXIT"] == "0"
    assert "1 changed" in diff["OUT"] and "op: Abs → Neg" in diff["OUT"]
    check = _probe(["check", "a.json"], tmp_path)
    assert check["IMPORTED"] == "" and check["EXIT"] == "0"
    assert "no findings" in check["OUT"]

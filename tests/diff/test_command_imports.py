"""`airctl diff A B` and `airctl check FILE` of airctl graph JSON files start as fast as they can: they
import neither torch nor GE's protobuf schema (the readers of TorchAir's text dumps import that when
such a dump is read), and they report as usual (bench/bench_diff.py and bench_check.py time them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from airctl.graph.model import Graph, Node
from airctl.io.json_io import write_json
from tests.conftest import REPO

PROBE = """
import sys, io, contextlib
from airctl.cli.main import run
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        run({argv!r})
    except SystemExit as e:
        code = e.code
print("IMPORTED=" + ",".join(m for m in ("torch", "google.protobuf", "airctl.io.pbtxt", "airctl.io.ge_text")
                              if m in sys.modules))
print("EXIT=" + str(code))
print("OUT=" + buf.getvalue().replace(chr(10), " "))
"""


def _probe(argv: list[str], cwd: Path) -> dict[str, str]:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env=dict(os.environ, AIRCTL_WARM="0", PYTHONPATH=str(REPO)))
    lines = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line[:12])
    assert "IMPORTED" in lines, proc.stderr
    return lines


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

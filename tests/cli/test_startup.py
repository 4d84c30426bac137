"""`airctl --help` and `airctl doctor` must not pay for `import torch`."""

from __future__ import annotations

import json
import subprocess
import sys

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
print("TORCH_IMPORTED=" + str("torch" in sys.modules))
print("EXIT=" + str(code))
print("OUT=" + buf.getvalue().replace(chr(10), " "))
"""


def _probe(argv: list[str]) -> dict[str, str]:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    lines = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line[:20])
    assert "TORCH_IMPORTED" in lines, proc.stderr
    return lines


def test_help_does_not_import_torch() -> None:
    res = _probe(["--help"])
    assert res["TORCH_IMPORTED"] == "False"
    assert res["EXIT"] == "0"
    assert "compile" in res["OUT"] and "doctor" in res["OUT"]


def test_doctor_does_not_import_torch_and_reports_backend() -> None:
    res = _probe(["doctor", "--json"])
    assert res["TORCH_IMPORTED"] == "False"
    data = json.loads(res["OUT"])
    assert data["torch"].startswith("2.13.0")
    assert data["torch_npu"] == "2.13.0"
    assert data["torchair"]["path"].endswith("torch_npu/dynamo/torchair")
    assert data["backend_auto"]["name"] == "sim"
    assert data["cann"]["available"] is False and data["backend_auto"]["reason"]


def test_compile_help_teaches_usage() -> None:
    res = _probe(["compile", "--help"])
    assert res["TORCH_IMPORTED"] == "False"
    assert "--mode" in res["OUT"] and "Examples" in res["OUT"]

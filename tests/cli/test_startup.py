"""`airctl --help` and `airctl doctor` must not pay for `import torch`."""

from __future__ import annotations

import json

from tests.command_probe import probe as _probe


def test_help_does_not_import_torch() -> None:
    res = _probe(["--help"])
    assert res["IMPORTED"] == ""
    assert res["EXIT"] == "0"
    assert "compile" in res["OUT"] and "doctor" in res["OUT"]


def test_doctor_does_not_import_torch_and_reports_backend() -> None:
    res = _probe(["doctor", "--json"])
    assert res["IMPORTED"] == ""
    data = json.loads(res["OUT"])
    assert data["torch"].startswith("2.13.0")
    assert data["torch_npu"] == "2.13.0"
    assert data["torchair"]["path"].endswith("torch_npu/dynamo/torchair")
    assert data["backend_auto"]["name"] == "sim"
    assert data["cann"]["available"] is False and data["backend_auto"]["reason"]


def test_compile_help_teaches_usage() -> None:
    res = _probe(["compile", "--help"])
    assert res["IMPORTED"] == ""
    assert "--mode" in res["OUT"] and "Examples" in res["OUT"]

"""``airctl export tlparse``: one ledger as torch's TORCH_TRACE log; tlparse renders it when installed."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.pipeline.export import export_tlparse
from airctl.pipeline.importing import ImportRequest, import_artifacts

IMPORTS = Path(__file__).resolve().parents[2] / "fixtures" / "imports"
# torch/_logging/_internal.py's glog prefix as tlparse reads it (its regex, 0.4.3)
PREFIX = re.compile(r"^V(\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6}) (\d+) ([^:]+):(\d+)\] (\{.*\})$")


def _records(path: Path) -> list[tuple[dict, str | None]]:
    records: list[tuple[dict, list[str] | None]] = []
    for line in path.read_text().split("\n")[:-1]:
        if line.startswith("\t"):
            records[-1][1].append(line[1:])
            continue
        m = PREFIX.match(line)
        assert m, line
        meta = json.loads(m.group(10))
        records.append((meta, [] if "has_payload" in meta else None))
    return [(meta, None if body is None else "\n".join(body)) for meta, body in records]


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    return import_artifacts(ImportRequest([IMPORTS / "ma_tcd"], out_dir=out)).ledger_dir


def test_trace_has_each_stage_with_valid_payloads(ledger: Path, tmp_path: Path) -> None:
    result = export_tlparse(ledger, tmp_path)
    (log,) = result.files
    assert log.name == "dedicated_log_torch_trace_airctl.log"
    records = _records(log)
    assert len(records) == result.records
    for meta, payload in records:
        if payload is not None:
            assert hashlib.md5(payload.encode()).hexdigest() == meta["has_payload"]  # noqa: S324
    kinds = [next(k for k in meta if k not in ("frame_id", "frame_compile_id", "attempt", "has_payload", "rank"))
             for meta, _ in records]
    assert kinds[:2] == ["artifact", "link"]  # the ledger, report.html: no compile id
    assert kinds[2:5] == ["dynamo_start", "dynamo_output_graph", "aot_inference_graph"]
    assert kinds[-1] == "compilation_metrics"
    dumps = [meta["graph_dump"]["name"] for meta, _ in records if "graph_dump" in meta]
    assert dumps == ["torchair_after_post_grad_custom_pre_pass", "torchair_fx-final", "torchair_ge-original",
                     "torchair_ge-optimized"]  # unchanged passes are not repeated
    assert all(meta.get("frame_id") == 0 for meta, _ in records[2:])
    ge = next(p for meta, p in records if meta.get("graph_dump", {}).get("name") == "torchair_ge-optimized")
    assert 'name: "Sub"' in ge and 'input: "^Abs"' in ge  # GE stages as pbtxt


def test_cli_export_and_tlparse_renders_it(ledger: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(build_app(), ["export", "tlparse", str(ledger), "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    log = Path(r.stdout.strip())
    assert log.is_file() and "tlparse" in r.stderr
    tlparse = shutil.which("tlparse") or shutil.which("tlparse", path=str(Path(sys.executable).parent))
    if tlparse is None:
        pytest.skip("tlparse is not installed (pip install tlparse; it is in the test extras)")
    out = tmp_path / "rendered"
    proc = subprocess.run([tlparse, str(log), "-o", str(out), "--overwrite", "--no-browser", "--strict"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "fail" not in proc.stderr.lower()
    assert (out / "index.html").is_file()
    rendered = {p.name.rsplit("_", 1)[0] for p in (out / "-_0_0_0").iterdir()}
    assert {"dynamo_output_graph", "aot_inference_graph", "torchair_fx-final", "torchair_ge-optimized",
            "compilation_metrics"} <= rendered

"""``airctl profile`` of an imported NPU ledger (GE dumps only) runs its GE graphs per stream under
sim, or names the op types it cannot run (issue 31, acceptance 3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # TorchAir's import, then timed runs

DUMPS = REPO / "fixtures" / "imports" / "ma_txt" / "graph_dump"  # TorchAir's own dumps of streams.py
runner = CliRunner()


def _import(dumps: Path, out: Path) -> Path:
    from airctl.pipeline.importing import ImportRequest, import_artifacts

    return Path(import_artifacts(ImportRequest([dumps], out_dir=out, report=False)).ledger_dir)


def test_an_imported_ge_ledger_profiles_with_a_lane_per_stream(tmp_path: Path) -> None:
    ledger = _import(DUMPS, tmp_path / "runs")
    result = runner.invoke(build_app(), ["profile", str(ledger), "--steps", "2", "--warmup", "0", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    streams = {s["stream"]: s["ops"] for s in summary["streams"]}
    assert streams == {"default": 2, "stream_1": 2}  # Add, Sub | MatMul, Abs: the dump's _user_stream_label
    timeline = json.loads((ledger / "profile" / "timeline_1-inference.json").read_text())
    ops = {(e["node"], e["op"], e["stream"]) for e in timeline["events"]}
    assert ("MatMul", "ge.MatMul", "stream_1") in ops and ("Sub", "ge.Sub", "default") in ops
    kinds = {s["kind"] for s in timeline["syncs"]}
    assert "record_wait" in kinds  # Sub's control edge from Abs (other stream) became a wait
    assert (ledger / "profile" / "trace.json").is_file()


def test_the_current_run_an_import_is_what_profile_runs(tmp_path: Path) -> None:
    _import(DUMPS, tmp_path / "runs")
    result = runner.invoke(build_app(), ["profile", "--out", str(tmp_path / "runs"), "--steps", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["meta"]["imported"] is True


def test_op_types_sim_cannot_run_are_named_and_nothing_runs(tmp_path: Path) -> None:
    dumps = tmp_path / "dumps"
    shutil.copytree(DUMPS, dumps)
    for f in dumps.glob("*.txt"):
        f.write_text(f.read_text().replace('type: "Abs"', 'type: "Dawsn"'))
    ledger = _import(dumps, tmp_path / "runs")
    result = runner.invoke(build_app(), ["profile", str(ledger)])
    assert result.exit_code != 0
    text = " ".join(result.output.split())
    assert "sim cannot run these GE op types of the imported graphs: Dawsn in graph 1-inference (Abs)" in text
    assert "airctl/execute/ge_ops.py" in text
    assert not (ledger / "profile").exists()

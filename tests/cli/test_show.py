"""``airctl show``: ``--run ID`` works as everywhere else; ``-v`` lists the findings later passes fixed;
the report's path is printed (fast: ledgers written without compiling)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.ledger.runs import mark_latest
from tests.conftest import MODELS

runner = CliRunner()


def _run(out: Path, run_id: str) -> Path:
    from airctl.ledger.writer import LedgerWriter
    from airctl.pipeline.run.current import model_record

    writer = LedgerWriter.create(out, "seed", command="compile", mode="reduce-overhead",
                                 model=model_record(MODELS / "seed.py", None))
    writer.set_findings([{"rule": "race_cross_stream_without_wait", "severity": "error", "nodes": ["mm", "sub"],
                          "message": "sub on the default stream reads mm", "stage": "after:yaml:scope",
                          "graph": "1-inference", "fixed_by": "yaml:sub-waits"}])
    writer.finish()
    target = out / run_id
    writer.root.rename(target)
    return target


def test_show_takes_the_run_as_an_option_and_lists_what_later_passes_fixed(tmp_path: Path) -> None:
    _run(tmp_path, "20261127-100000-seed-aaaa")
    _run(tmp_path, "20261127-110000-seed-bbbb")
    mark_latest(tmp_path, "20261127-110000-seed-bbbb")
    r = runner.invoke(build_app(), ["show", "--out", str(tmp_path), "--run", "100000", "-v"])
    assert r.exit_code == 0, r.output
    assert "20261127-100000-seed-aaaa" in r.stdout
    assert "verifier:" not in r.stdout  # the fixed finding is not the run's
    assert "earlier stages: 1 finding fixed by a later pass (sub-waits)" in r.stdout
    assert "race_cross_stream_without_wait ×1 at after:yaml:scope, fixed by pass sub-waits" in r.stdout
    plain = runner.invoke(build_app(), ["show", "--out", str(tmp_path), "--run", "100000"])
    assert "-v lists them" in plain.stdout and "fixed by pass sub-waits" not in plain.stdout



def test_the_summary_title_names_the_pass_file_of_a_run_that_had_one(tmp_path: Path) -> None:
    import json

    run = tmp_path / "20261208-000000-model-0000"
    run.mkdir()
    (run / "index.json").write_text(json.dumps({
        "run_id": run.name, "command": "passes apply", "status": "ok", "model": {"path": "model.py"},
        "passes": "stream.yaml", "mode": "max-autotune", "backend": {"name": "sim"}, "graphs": []}))
    result = CliRunner().invoke(build_app(), ["show", str(run)])
    assert result.exit_code == 0, result.output
    assert "airctl passes apply model.py passes=stream.yaml mode=max-autotune backend=sim" in result.output
    imported = tmp_path / "20261208-000001-import-0000"
    imported.mkdir()
    (imported / "index.json").write_text(json.dumps({"run_id": imported.name, "command": "import", "status": "ok",
                                                     "mode": "max-autotune", "graphs": []}))
    result = CliRunner().invoke(build_app(), ["show", str(imported)])
    assert "airctl import mode=max-autotune\n" in result.output and "None" not in result.output, result.output


def test_an_imported_runs_stages_have_no_time_of_airctls_reading() -> None:
    from airctl.cli.summary import stage_table

    graph = {"id": "1-inference", "kind": "inference", "stages": [
        {"index": 0, "name": "ge-original", "nodes": 7, "elapsed": 0.001},
        {"index": 1, "name": "ge-optimized", "nodes": 7, "elapsed": 0.009}]}
    from rich.console import Console

    def shown(measured: bool) -> str:
        console = Console(width=120, record=True)
        console.print(stage_table(graph, measured=measured))
        return console.export_text()

    imported = " ".join(shown(False).split())
    assert "8.0 ms" in shown(True) and " ms" not in imported and "an import times nothing itself" in imported

"""The current run's origin (pipeline/run/current.py): what `passes apply` and `profile` compile again
when given no model: the run's model script, entry, mode and pass file, found where the run left them."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.run.current import run_origin


def test_a_pass_file_given_relative_is_found_by_its_resolved_path_from_another_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir(), elsewhere.mkdir()
    model, passes = work / "model.py", work / "stream.yaml"
    model.write_text("x = 1\n"), passes.write_text("version: 1\npasses: []\n")
    writer = LedgerWriter.create(tmp_path / "runs", "model", command="compile", mode="reduce-overhead",
                                 model={"path": str(model), "resolved": str(model), "entry": None},
                                 passes="stream.yaml", passes_resolved=str(passes))
    writer.finish()
    monkeypatch.chdir(elsewhere)  # `stream.yaml` as given names nothing here
    origin = run_origin(tmp_path / "runs")
    assert (origin.model, origin.mode, origin.passes, origin.warnings) == (model, "reduce-overhead", passes, [])

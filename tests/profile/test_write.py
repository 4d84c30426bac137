"""airctl/profile/write.py: the files report.html embeds, under <ledger>/profile/."""

from __future__ import annotations

import json
from pathlib import Path

from airctl.profile.summary import summarize
from airctl.profile.write import write_profile

from .timelines import seed_two_streams


def test_trace_summary_and_picture(tmp_path: Path) -> None:
    t = seed_two_streams()
    s = summarize([t])
    files = write_profile(tmp_path / "profile", [t], s, title="seed")
    assert {p.name for p in files.folder.iterdir()} == {"trace.json", "summary.json", "timeline.svg"}
    data = json.loads(files.summary.read_text())
    assert data["trace"] == str(files.trace) and data == json.loads(json.dumps(s.to_json()))
    assert data["meta"]["svg"] == str(files.svg)
    assert json.loads(files.trace.read_text())["traceEvents"]
    assert files.svg.read_text().startswith("<svg")

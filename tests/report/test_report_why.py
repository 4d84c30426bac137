"""report.html's Run tab: ``airctl why``'s table in the payload (rendered as text by viewer/tabs.js)."""

from __future__ import annotations

from pathlib import Path

from airctl.ledger.writer import LedgerWriter
from airctl.report import write_report
from airctl.report.page import payload_of
from tests.report.ledgers import make_ledger


def test_the_payload_holds_the_why_table_without_the_recorded_detail(tmp_path: Path) -> None:
    writer = LedgerWriter.create(tmp_path, "why", command="run", graphs=[])
    writer.add_event({"kind": "graph_break", "reason": "Data-dependent branching</td><script>", "file": "m.py",
                      "line": 17, "dynamo_hint": "Use `torch.cond`."})
    writer.finish()
    page = write_report(writer.root).read_text()
    data = payload_of(page)
    assert data["why"]["summary"] == "1 graph break: airctl why"
    (row,) = data["why"]["rows"]
    assert (row["class"], row["where"], row["hint"]) == ("graph break", "m.py:17", "Use `torch.cond`.")
    assert row["reason"] == "Data-dependent branching</td><script>" and "detail" not in row
    assert "</td><script>" not in page  # the payload is script-safe JSON; the viewer sets it as text


def test_a_run_without_events_says_so(tmp_path: Path) -> None:
    data = payload_of(write_report(make_ledger(tmp_path)).read_text())
    assert data["why"]["rows"] == [] and data["why"]["summary"].startswith("no graph breaks")

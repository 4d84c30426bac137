"""report.html's Run tab: ``airctl why``'s table in the payload (rendered as text by viewer/tabs.js)."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.ledger.writer import LedgerWriter
from airctl.report import write_report
from airctl.report.page import payload_of
from tests.report.browser import dump_dom, need_chromium
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


@pytest.mark.slow  # drives Chromium
def test_the_run_tab_shows_the_table_as_text(tmp_path: Path) -> None:
    need_chromium()
    writer = LedgerWriter.create(tmp_path, "why", command="run", graphs=[])
    writer.add_event({"kind": "recompile", "reason": "x.size(0) was 4, now 8 <img src=x onerror=alert(1)>",
                      "file": "m.py", "line": 16, "guard": "shape", "input": "x", "dim": 0})
    writer.finish()
    dom = dump_dom(write_report(writer.root), "tab=run")
    assert 'data-ready="1"' in dom and "Why: 1 recompile: airctl why" in dom
    assert "x.size(0) was 4, now 8 &lt;img src=x onerror=alert(1)&gt;" in dom and "m.py:16" in dom

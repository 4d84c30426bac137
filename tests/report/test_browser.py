"""report.html in headless Chromium: the DOM after the viewer ran (stage list, node count, search
hits, node details), a screenshot, and graph contents staying inert (XSS)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from airctl.report import write_report
from airctl.report.page import graph_page
from tests.report.browser import dump_dom, need_chromium, screenshot
from tests.report.ledgers import EVIL, evil_graph, evil_ledger, make_ledger

pytestmark = pytest.mark.slow  # drives Chromium (seconds a test)


def test_report_in_chromium(tmp_path: Path) -> None:
    need_chromium()
    page = write_report(make_ledger(tmp_path / "runs"))
    dom = dump_dom(page, "stage=fx-final&search=mm")
    assert 'data-ready="1"' in dom
    stages = re.findall(r'<li class="stage[^"]*"[^>]*>.*?<span class="name">([^<]*)</span>', dom)
    # changed-only by default: the unchanged pass is hidden
    assert stages == ["aot-inference", "yaml:mm-abs-on-stream1", "fx-final", "ge-original", "ge-optimized"]
    assert "1 unchanged stage hidden" in dom
    assert re.search(r'<span id="node-count" data-nodes="10">stage 003 fx-final · 10 nodes', dom)
    hits = re.findall(r'<li class="hit"><span class="name">([^<]*)</span>', dom)
    assert hits == ["mm"]
    assert "1 match for" in dom
    # the first hit is selected: its attributes, stream and source line are shown
    assert re.search(r"<h2>mm</h2>", dom)
    assert "stream_1" in dom and "aten.mm.default" in dom
    # show all + a GE stage
    dom = dump_dom(page, "all=1&stage=ge-optimized&search=MatMul")
    assert "after:optimize_noop_ops" in dom and "unchanged stage" not in dom.split('id="hidden-count"')[1][:40]
    assert re.search(r'data-nodes="\d+">stage 005 ge-optimized', dom)
    assert "status-changed" in dom  # MatMul moved to stream_1 in this stage
    png = tmp_path / "report.png"
    screenshot(page, png, "stage=yaml:mm-abs-on-stream1")
    assert png.stat().st_size > 5000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_findings_and_profile_tabs(tmp_path: Path) -> None:
    need_chromium()
    page = write_report(make_ledger(tmp_path / "runs", profile=True))
    dom = dump_dom(page, "tab=findings")
    assert "Findings (1)" in dom and "wait_dropped_at_tail" in dom and 'class="node-link">wait_default<' in dom
    assert "overlap between streams: 250.0 ms" in dom
    assert not PWNED.search(dom)  # the timeline SVG's script did not run


PWNED = re.compile(r"<[a-z]+[^<>]*\sdata-pwned=")  # an element whose attribute an injected script set


def _assert_inert(dom: str) -> None:
    assert not PWNED.search(dom)
    assert "<script>alert(1)</script>" not in dom
    assert "<img src=\"x\"" not in dom and "<img src=x" not in dom
    assert dom.count("<script") == 2  # the payload block and the viewer


def test_xss_report_is_inert(tmp_path: Path) -> None:
    need_chromium()
    page = write_report(evil_ledger(tmp_path / "runs"))
    raw = page.read_text()
    assert raw.count("<script") == 2 and EVIL not in raw
    doms = {fragment: dump_dom(page, fragment) for fragment in ("search=script", "tab=findings", "tab=run",
                                                                "search=img&all=1")}
    for fragment, dom in doms.items():
        assert 'data-ready="1"' in dom, fragment
        _assert_inert(dom)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in doms["search=script"]  # shown as text in the hit list and details


def test_xss_dump_html_is_inert(tmp_path: Path) -> None:
    need_chromium()
    out = tmp_path / "g.html"
    out.write_text(graph_page(evil_graph()), encoding="utf-8")
    assert EVIL not in out.read_text()
    dom = dump_dom(out, "search=alert")
    assert 'data-ready="1"' in dom
    _assert_inert(dom)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom


def test_failed_run_without_graphs_still_renders(tmp_path: Path) -> None:
    from airctl.ledger.writer import LedgerWriter

    need_chromium()
    w = LedgerWriter.create(tmp_path, "failed", command="compile")
    w.fail("model raised at import")
    dom = dump_dom(write_report(w.root), "tab=run")
    assert 'data-ready="1"' in dom and "no graphs in this run" in dom and "model raised at import" in dom


def test_compressed_payload_is_inflated_by_the_browser(tmp_path: Path) -> None:
    """A large payload is stored gzip+base64; the page inflates it and shows the same report."""
    from airctl.ledger.reader import Ledger
    from airctl.report.ledger_data import ledger_payload
    from airctl.report.page import GZIP_TYPE, html_page, payload_json, payload_of

    need_chromium()
    root = make_ledger(tmp_path / "runs")
    payload = ledger_payload(Ledger.open(root))
    page = root / "compressed.html"
    page.write_text(html_page(payload, compress_above=0))
    stored = payload_of(page.read_text())
    as_json = json.loads(payload_json(payload))  # what the page holds (positions as keys become strings)
    assert f'type="{GZIP_TYPE}"' in page.read_text() and {**stored, "style": None} == {**as_json, "style": None}
    dom = dump_dom(page, "stage=fx-final&search=mm")
    assert 'data-ready="1"' in dom
    stages = re.findall(r'<li class="stage[^"]*"[^>]*>.*?<span class="name">([^<]*)</span>', dom)
    assert stages == ["aot-inference", "yaml:mm-abs-on-stream1", "fx-final", "ge-original", "ge-optimized"]
    assert re.findall(r'<li class="hit"><span class="name">([^<]*)</span>', dom) == ["mm"]


def test_a_plain_ops_details_show_its_kind_and_inputs(tmp_path: Path) -> None:
    """A plain op's details are stored as its input list alone (report/payload.py): the panel still
    shows its kind and inputs, and an op with attributes keeps them."""
    from airctl.graph.model import Graph, Node

    need_chromium()
    graph = Graph("g", "ge", [Node("x", "Data"), Node("plain_add", "Add", inputs=["x:0", "x:0"]),
                              Node("cast_with_attrs", "Cast", inputs=["plain_add:0"], attrs={"dst_type": 7})])
    out = tmp_path / "g.html"
    out.write_text(graph_page(graph), encoding="utf-8")
    dom = dump_dom(out, "search=plain_add")
    assert re.search(r"<th>kind</th><td>op</td>", dom) and re.search(r"<th>inputs</th><td>x:0, x:0</td>", dom)
    dom = dump_dom(out, "search=cast_with")
    assert "dst_type" in dom and re.search(r"<th>inputs</th><td>plain_add:0</td>", dom)

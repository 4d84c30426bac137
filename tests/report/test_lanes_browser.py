"""report.html's graph and lane panes in headless Chromium, read from element positions (the
viewer's ``#probe=1`` record): the seed model's stream plan placed by program order (issue 20,
acceptance 1), a racy plan's race on its reading op (acceptance 2), a finding shown in both panes,
and graph contents staying inert in the lane pane."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.graph.model import Graph
from airctl.io.read import read_graph
from airctl.ledger.writer import LedgerWriter
from airctl.report import write_report
from airctl.report.page import graph_page
from tests.io.dumps import FX_AFTER
from tests.report.browser import boxes, dump_dom, need_chromium, read_probe
from tests.report.ledgers import EVIL, evil_graph, evil_ledger, make_ledger
from tests.report.test_browser import _assert_inert

pytestmark = pytest.mark.slow  # drives Chromium (seconds a test)

PLAN = ("scope_enter_default", "mm", "abs_1", "record_default", "scope_exit_default")
WINDOW = (1400, 900)  # both panes wide enough to read


def _inside(inner: tuple[float, ...], outer: tuple[float, ...], slack: float = 0.5) -> bool:
    return (outer[0] - slack <= inner[0] and outer[1] - slack <= inner[1] and inner[2] <= outer[2] + slack
            and inner[3] <= outer[3] + slack)


def assert_plan_in_pane(items: dict[str, list[dict[str, str]]], edge_tag: str) -> None:
    """scope_enter above mm, record under abs and above scope_exit, wait above sub and tied to it; the
    scope's nodes in stream_1's band, the wait (default stream) outside it."""
    box = boxes(items["i"])
    assert set(PLAN) | {"wait_default", "sub"} <= set(box), items  # all in view
    assert box["scope_enter_default"][3] <= box["mm"][1]
    assert box["abs_1"][3] <= box["record_default"][1] and box["record_default"][3] <= box["scope_exit_default"][1]
    assert box["wait_default"][3] <= box["sub"][1]
    (band,) = [b for b in items["b"] if b["stream"] == "stream_1"]
    band_box = boxes([band], "stream")["stream_1"]
    for name in PLAN:
        assert _inside(box[name], band_box), name
    assert not _inside(box["wait_default"], band_box)
    links = {(e["from"], e["to"], e.get("kind")) for e in items[edge_tag]}
    assert ("record_default", "wait_default", "sync") in links
    if edge_tag == "e":  # the graph pane draws the order edge that ties the wait to sub
        assert ("wait_default", "sub", "order") in links


def test_seed_plan_in_both_panes(tmp_path: Path) -> None:
    need_chromium()
    page = write_report(make_ledger(tmp_path / "runs"))  # its fx-final is the seed model after passes/stream.yaml
    probe = read_probe(dump_dom(page, "stage=fx-final&pane=both&probe=1", window=WINDOW))
    assert set(probe) == {"graph", "lanes"}
    assert_plan_in_pane(probe["graph"], "e")
    assert_plan_in_pane(probe["lanes"], "a")
    lanes = {r["name"]: r["stream"] for r in probe["lanes"]["i"]}
    assert lanes["wait_default"] == lanes["sub"] == "default stream" and lanes["record_default"] == "stream_1"


def racy_ledger(out: Path) -> Path:
    g = read_graph(FX_AFTER)
    racy = Graph(g.name, "fx", [n for n in g.nodes if n.name != "wait_default"])
    w = LedgerWriter.create(out, "racy", command="compile", mode="reduce-overhead", status="ok")
    w.graph("1-inference", "inference", name="graph_1")
    w.add_stage("1-inference", "yaml:mm-abs-on-stream1", racy, changed=True)
    w.add_stage("1-inference", "fx-final", racy)
    w.set(findings=[{"rule": "race_cross_stream_without_wait", "severity": "error", "mode": "reduce-overhead",
                     "nodes": ["mm", "sub"], "message": "sub on the default stream reads mm produced on stream_1",
                     "graph": "1-inference", "stage": "after:yaml:mm-abs-on-stream1"}])
    w.finish()
    return w.root


def test_racy_plan_shows_the_race_on_the_reading_op(tmp_path: Path) -> None:
    need_chromium()
    page = write_report(racy_ledger(tmp_path / "runs"))
    lanes = read_probe(dump_dom(page, "stage=fx-final&pane=lanes&probe=1", window=WINDOW))["lanes"]
    primary = {(m["name"], m["rule"]) for m in lanes["m"] if m["primary"] == "1"}
    assert primary == {("add", "race_cross_stream_without_wait"), ("sub", "race_cross_stream_without_wait")}
    assert {(a["from"], a["to"]) for a in lanes["a"] if a["kind"] == "race"} == {("abs_1", "add"), ("mm", "sub")}
    # the finding clicked in the Findings tab (#finding=0 opens it): its stage, both panes, its nodes marked
    probe = read_probe(dump_dom(page, "finding=0&probe=1", window=WINDOW))
    assert set(probe) == {"graph", "lanes"}
    for pane in probe.values():
        focus = {r["name"] for r in pane["i"] if r.get("focus") == "1"}
        selected = [r["name"] for r in pane["i"] if r.get("selected") == "1"]
        assert focus == {"mm", "sub"} and selected == ["sub"]


def test_lanes_of_a_ge_stage(tmp_path: Path) -> None:
    need_chromium()
    page = write_report(make_ledger(tmp_path / "runs"))
    lanes = read_probe(dump_dom(page, "stage=ge-optimized&pane=lanes&probe=1", window=WINDOW))["lanes"]
    assert [r["stream"] for r in lanes["l"]] == ["default stream", "stream_1"]
    assert {(a["from"], a["to"]) for a in lanes["a"]} == {("Abs", "Sub")}  # a control edge across lanes


def test_xss_lane_pane_is_inert(tmp_path: Path) -> None:
    need_chromium()
    page = write_report(evil_ledger(tmp_path / "runs"))
    dom = dump_dom(page, "pane=both&probe=1&search=script")
    assert 'data-ready="1"' in dom
    _assert_inert(dom)
    assert any(r["name"] == EVIL for r in read_probe(dom)["lanes"]["i"])
    out = tmp_path / "lanes.html"
    out.write_text(graph_page(evil_graph(), pane="lanes"), encoding="utf-8")
    dom = dump_dom(out, "probe=1")
    _assert_inert(dom)
    assert set(read_probe(dom)) == {"lanes"}


def test_a_big_plan_is_folded_into_runs_with_every_arrow(tmp_path: Path) -> None:
    from tests.render.test_collapse import _graph

    need_chromium()
    out = tmp_path / "big.html"
    out.write_text(graph_page(_graph(blocks=250), pane="lanes"), encoding="utf-8")  # 2502 nodes: folded
    lanes = read_probe(dump_dom(out, "probe=1&node=layers.3.relu", window=WINDOW))["lanes"]
    runs = [r for r in lanes["i"] if "run" in r]
    assert runs and all(r["run"] == "2" for r in runs)  # mm1 + relu of one module on s1
    assert len([a for a in lanes["a"] if a["kind"] == "sync"]) == 500  # every record -> wait kept
    (selected,) = [r for r in lanes["i"] if r.get("selected") == "1"]
    assert selected["name"] == "layers.3.mm1" and selected["run"] == "2"  # the run holding the node, centred
    assert 0 < float(selected["y"]) < 900

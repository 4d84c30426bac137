"""report.html and diff.html open on what the user came for (issue 32): the stage the user's passes
changed (not GE's, where every node gains attributes), fitted on the changed nodes, with the lanes
beside the graph when the run has streams; diff.html fitted on the changed nodes and titled with
both sides. Read in headless Chromium from the viewer's ``#probe=1`` record, opened with no other
fragment: the changed nodes must lie inside the pane."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.graph.model import Graph, Node
from airctl.io.read import write_graph
from airctl.ledger.writer import LedgerWriter
from airctl.report import write_report
from tests.io.dumps import DUMPS
from tests.report.browser import boxes, dump_dom, need_chromium, read_probe

WINDOW = (1400, 900)
MOVED = range(230, 236)  # deep in a 300-op chain: a whole-graph fit would not show them readably


def chain(n: int = 300, on_stream: range | None = None) -> Graph:
    nodes = [Node("x", "placeholder", kind="placeholder")]
    prev = "x"
    for k in range(n):
        name = f"relu_{k}"
        stream = "stream_1" if on_stream is not None and k in on_stream else None
        nodes.append(Node(name, "aten.relu.default", inputs=[prev], stream=stream, kind="call_function"))
        prev = name
    nodes.append(Node("output", "output", inputs=[prev], kind="output"))
    return Graph("graph_1", "fx", nodes)


def assert_in_view(pane: dict, names: list[str]) -> None:
    box = boxes(pane["i"])
    missing = [n for n in names if n not in box]
    assert not missing, f"not in view: {missing}"


@pytest.mark.slow
def test_report_opens_on_the_users_pass_fitted_with_lanes(tmp_path: Path) -> None:
    need_chromium()
    from airctl.io.read import read_graph

    w = LedgerWriter.create(tmp_path / "runs", "chain", command="passes apply", mode="reduce-overhead", status="ok")
    w.graph("1-inference", "inference", name="graph_1")
    w.add_stage("1-inference", "aot-inference", chain())
    w.add_stage("1-inference", "yaml:tail-on-stream1", chain(on_stream=MOVED), changed=True)
    w.add_stage("1-inference", "after:view_to_reshape", chain(on_stream=MOVED), changed=False)
    w.add_stage("1-inference", "fx-final", chain(on_stream=MOVED))
    w.add_stage("1-inference", "ge-optimized", read_graph(DUMPS / "stream" / "optimized.txt"))
    w.finish()
    page = write_report(w.root)
    probe = read_probe(dump_dom(page, "probe=1", window=WINDOW))
    assert set(probe) == {"graph", "lanes"}  # the run has streams: lanes open beside the graph
    moved = [f"relu_{k}" for k in MOVED]
    assert_in_view(probe["graph"], moved)
    assert_in_view(probe["lanes"], moved)


@pytest.mark.slow
def test_diff_html_is_fitted_on_the_changed_nodes_and_titled_with_both_sides(tmp_path: Path) -> None:
    need_chromium()
    a, b = tmp_path / "before.json", tmp_path / "after.json"
    write_graph(chain(), a)
    write_graph(chain(on_stream=MOVED), b)
    html = tmp_path / "diff.html"
    r = CliRunner().invoke(build_app(), ["diff", str(a), str(b), "--html", str(html)])
    assert r.exit_code == 0, r.output
    dom = dump_dom(html, "probe=1", window=WINDOW)
    title = dom.split("<title>", 1)[1].split("</title>", 1)[0]
    assert title.startswith("diff: ") and "before.json → " in title and title.endswith("after.json")
    probe = read_probe(dom)
    assert_in_view(probe["graph"], [f"relu_{k}" for k in MOVED])

"""The lane view (issue 20, acceptance 2): a column per stream, program order top to bottom, scope
bands, record -> wait arrows, the verifier's findings on the ops they concern; FX and GE; folding
for big graphs; the SVG and ``airctl dump --type lanes``."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.errors import AirctlError
from airctl.graph.model import Graph
from airctl.io.read import read_graph, write_graph
from airctl.modes import Mode
from airctl.render.lanes import build_lanes
from airctl.render.lanes_svg import lanes_svg
from airctl.verify import verify
from airctl.verify.rules import make_finding
from tests.io.dumps import DUMPS, FX_AFTER
from tests.render.test_collapse import _graph
from tests.report.ledgers import EVIL, evil_graph

runner = CliRunner()
SVG = "{http://www.w3.org/2000/svg}"


def racy() -> Graph:
    """fixtures/passes/racy_no_wait.yaml on the seed model: the stream plan without the wait."""
    g = read_graph(FX_AFTER)
    return Graph(g.name, "fx", [n for n in g.nodes if n.name != "wait_default"])


def _at(view, name: str) -> tuple[int, int]:  # noqa: ANN001
    i = [n.name for n in view.graph.nodes].index(name)
    return view.lane[i], view.row[i]


def test_seed_plan_lanes_rows_band_and_arrow() -> None:
    g = read_graph(FX_AFTER)
    view = build_lanes(g, "max-autotune", verify(g, "max-autotune"))
    assert view.streams == [None, "stream_1"]
    lane = {n: _at(view, n)[0] for n in ("scope_enter_default", "mm", "record_default", "wait_default", "sub")}
    assert lane == {"scope_enter_default": 1, "mm": 1, "record_default": 1, "wait_default": 0, "sub": 0}
    row = {n.name: _at(view, n.name)[1] for n in g.nodes}
    assert row["arg0_1"] == -1  # inputs are not drawn
    assert row["scope_enter_default"] == row["mm"] - 1 and row["record_default"] == row["abs_1"] + 1
    assert row["scope_exit_default"] == row["record_default"] + 1
    assert row["record_default"] < row["wait_default"] == row["sub"] - 1
    names = [n.name for n in g.nodes]
    assert [(names[s], names[d]) for s, d in view.arrows] == [("record_default", "wait_default")]
    (band,) = view.bands
    assert (band.lane, band.top, band.bottom) == (1, row["scope_enter_default"], row["scope_exit_default"])
    assert view.marks == [] and view.races == []


def test_a_racy_plan_marks_the_reading_ops_in_reduce_overhead_only() -> None:
    g = racy()
    view = build_lanes(g, "reduce-overhead", verify(g, "reduce-overhead"))
    names = [n.name for n in g.nodes]
    primary = {names[m.node] for m in view.marks if m.primary}
    assert primary == {"add", "sub"}  # the readers, not the producers
    assert {names[m.node] for m in view.marks if not m.primary} == {"mm", "abs_1"}
    assert {(names[s], names[d]) for s, d in view.races} == {("abs_1", "add"), ("mm", "sub")}
    # nothing orders the reads: each reader sits level with or above the op whose value it reads
    assert _at(view, "add")[1] <= _at(view, "abs_1")[1] and _at(view, "sub")[1] <= _at(view, "mm")[1]
    # GE synchronises cross-stream data edges: no race, and each reader is drawn after its producer
    ge = build_lanes(g, "max-autotune", verify(g, "max-autotune"))
    assert ge.races == [] and not any(m.rule.startswith("race") for m in ge.marks)
    assert _at(ge, "add")[1] > _at(ge, "abs_1")[1]


def test_ge_lanes_come_from_stream_labels_and_control_edges() -> None:
    g = read_graph(DUMPS / "stream" / "optimized.pbtxt")
    view = build_lanes(g, "max-autotune")
    assert view.streams == [None, "stream_1"]
    names = [n.name for n in g.nodes]
    assert [(names[s], names[d]) for s, d in view.arrows] == [("Abs", "Sub")]  # the record/wait, lowered
    assert _at(view, "MatMul")[0] == 1 and _at(view, "Sub")[0] == 0 and _at(view, "Sub")[1] > _at(view, "Abs")[1]
    assert view.bands == []  # GE has no scope nodes


def test_folding_keeps_every_arrow_and_mark() -> None:
    g = _graph(blocks=250)
    full = build_lanes(g, "max-autotune")
    folded = build_lanes(g, "max-autotune", fold="module", depth=2)
    assert folded.arrows == full.arrows and len(folded.arrows) == 500
    assert folded.rows < full.rows and folded.is_folded()
    names = [n.name for n in g.nodes]
    for i, r in enumerate(folded.run):  # record, wait and scope nodes never fold
        if names[i].endswith(("rec", "rec_out", "w_in", "w_out", "enter", "exit")):
            assert r == -1, names[i]
    runs = [r for r in folded.runs if len(r.members) > 1]
    assert runs and all(len({g.nodes[i].module.split(".")[1] for i in r.members}) == 1 for r in runs)
    # a finding on a node folding would hide: marked alike, and the node stays on its own row
    hidden = runs[0].members[-1]
    finding = make_finding("unbalanced_scope", Mode.MAX_AUTOTUNE, "marked", [names[hidden]], g)
    full = build_lanes(g, "max-autotune", [finding])
    marked = build_lanes(g, "max-autotune", [finding], fold="module", depth=2)
    assert [(m.node, m.rule) for m in marked.marks] == [(m.node, m.rule) for m in full.marks] == \
        [(hidden, "unbalanced_scope")]
    assert marked.run[hidden] == -1 and marked.rows == folded.rows + 1
    by_stream = build_lanes(g, "max-autotune", fold="stream")
    assert by_stream.rows <= folded.rows
    with pytest.raises(AirctlError):
        build_lanes(g, "max-autotune", fold="layer")
    with pytest.raises(AirctlError):
        build_lanes(g, "eager")


def _svg(view) -> ET.Element:  # noqa: ANN001
    return ET.fromstring(lanes_svg(view).encode("utf-8"))


def test_svg_draws_lanes_bands_arrows_and_marks() -> None:
    g = racy()
    root = _svg(build_lanes(g, "reduce-overhead", verify(g, "reduce-overhead")))
    lanes = [e for e in root.iter(f"{SVG}g") if e.get("class") == "lane"]
    assert len(lanes) == 2
    marked = {e.get("data-node"): e.get("data-rules") for e in root.iter(f"{SVG}g")
              if "marked" in (e.get("class") or "").split()}
    assert marked["add"] == marked["sub"] == "race_cross_stream_without_wait"
    assert marked["mm"] is None  # involved (the value read), not the op the finding is about
    races = {(p.get("data-from"), p.get("data-to")) for p in root.iter(f"{SVG}path") if "race" in p.get("class", "")}
    assert races == {("abs_1", "add"), ("mm", "sub")}
    bands = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "band"]
    assert [b.get("data-stream") for b in bands] == ["stream_1"]


def test_svg_escapes_graph_contents() -> None:
    g = evil_graph()
    bad = "\x01<b>\"&'\x7f"
    g.nodes[1] = replace(g.nodes[1], name=EVIL + bad)
    g.nodes[2] = replace(g.nodes[2], inputs=[EVIL + bad])
    text = lanes_svg(build_lanes(g, "max-autotune", verify(g, "max-autotune")))
    root = ET.fromstring(text.encode("utf-8"))  # control characters would make it unreadable XML
    for elem in root.iter():
        assert elem.tag not in (f"{SVG}script", f"{SVG}foreignObject")
        assert not any(a.startswith("on") for a in elem.attrib)
    assert EVIL not in text and "<b>" not in text
    assert any(e.get("data-node") == EVIL + '\\x01<b>"&\'\\x7f' for e in root.iter(f"{SVG}g"))


def test_dump_type_lanes_of_a_ledger_reads_fx_final_in_the_ledgers_mode(tmp_path: Path) -> None:
    from airctl.pipeline.dump import dump_source
    from tests.report.test_lanes_browser import racy_ledger

    run = racy_ledger(tmp_path / "runs")  # a reduce-overhead run whose last stage is fx-final's twin
    outcome = dump_source(run, "lanes", out=tmp_path / "plan.svg")
    assert "graph 1-inference, stage fx-final" in outcome.notes
    assert outcome.notes[-1].startswith("lanes (reduce-overhead): 2 streams") and "2 ops marked" in outcome.notes[-1]
    outcome = dump_source(run, "lanes", out=tmp_path / "plan.svg", mode="max-autotune")
    assert "0 ops marked" in outcome.notes[-1]  # GE synchronises the cross-stream reads


def test_dump_type_lanes_picks_the_picture_by_suffix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "racy.json"
    src.write_text(write_graph(racy(), "json"))
    app = build_app()
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["dump", str(src), "--type", "lanes", "--mode", "reduce-overhead"])
    assert result.exit_code == 0, result.output
    assert "2 ops marked by findings (2 errors)" in result.output and (tmp_path / "racy.lanes.svg").is_file()
    out = tmp_path / "plan.html"
    result = runner.invoke(app, ["dump", str(src), "--type", "lanes", "-o", str(out)])
    assert result.exit_code == 0 and out.read_text().count("<script") == 2
    assert '"pane":"lanes"' in out.read_text()
    result = runner.invoke(app, ["dump", str(src), "--type", "lanes", "-o", str(tmp_path / "plan.pdf")])
    assert result.exit_code == 2 and "svg, png or html" in result.output

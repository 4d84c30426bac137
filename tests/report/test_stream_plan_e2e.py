"""Issue 20 end to end, on real compiles: the seed model with passes/stream.yaml drawn by
``airctl dump`` (dot, svg, png, lanes) and in report.html with scope, record and wait nodes where
program order puts them (acceptance 1); the transformer fixture with its two-stream pass file in
three lanes with every record -> wait arrow (acceptance 2)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.io.json_io import read_json
from airctl.pipeline.apply import apply_passes
from airctl.pipeline.target import Target
from tests.conftest import MODELS
from tests.passes.conftest import PASSES
from tests.render.test_order import PLAN, _assert_plan_positions, _graphviz_svg, needs_dot
from tests.report.browser import dump_dom, need_chromium, read_probe
from tests.report.test_lanes_browser import WINDOW, assert_plan_in_pane

pytestmark = pytest.mark.slow
runner = CliRunner()
SVG = "{http://www.w3.org/2000/svg}"


def compiled(pass_file: str, model: str, mode: str, out: Path) -> Path:
    result = apply_passes(Target(MODELS / model, mode=mode, backend="sim", passes_file=PASSES / pass_file), out=out)
    assert result.error is None, result.error
    return result.ledger_dir


def fx_final(ledger: Path):  # noqa: ANN201
    index = json.loads((ledger / "index.json").read_text())
    (final,) = [s for g in index["graphs"] for s in g["stages"] if s["name"] == "fx-final"]
    return read_json(ledger / final["file"])


def dump(*args: str) -> str:
    result = runner.invoke(build_app(), ["dump", *args])
    assert result.exit_code == 0, result.output
    return result.output


@needs_dot
def test_seed_stream_plan_in_every_picture(tmp_path: Path) -> None:
    need_chromium()
    run = compiled("stream.yaml", "seed.py", "max-autotune", tmp_path / "runs")
    graph = fx_final(run)
    for kind in ("dot", "svg", "png"):
        dump(str(run), "--stage", "fx-final", "--type", kind, "-o", str(tmp_path / f"plan.{kind}"))
    source = (tmp_path / "plan.dot").read_text()
    cluster = re.search(r"subgraph cluster_0 \{(.*?)\n  \}", source, re.S).group(1)
    assert {graph.nodes[int(i)].name for i in re.findall(r"^\s+n(\d+) \[", cluster, re.M)} == set(PLAN)
    nodes, clusters, edges = _graphviz_svg(ET.parse(tmp_path / "plan.svg").getroot(), graph)
    _assert_plan_positions(nodes, edges, clusters["cluster_0"])
    assert (tmp_path / "plan.png").read_bytes()[:4] == b"\x89PNG"
    probe = read_probe(dump_dom(run / "report.html", "stage=fx-final&pane=both&probe=1", window=WINDOW))
    assert_plan_in_pane(probe["graph"], "e")
    assert_plan_in_pane(probe["lanes"], "a")


def test_transformer_two_streams_in_three_lanes_with_every_arrow(tmp_path: Path) -> None:
    need_chromium()
    run = compiled("transformer_two_streams.yaml", "transformer.py", "reduce-overhead", tmp_path / "runs")
    graph = fx_final(run)
    syncs = {(e.src, e.dst) for e in graph.edges() if e.kind == "sync"}
    assert len(syncs) == 12  # 4 record/wait pairs per decoder layer, 3 layers
    output = dump(str(run), "--stage", "fx-final", "--type", "lanes", "-o", str(tmp_path / "plan.svg"))
    assert "lanes (reduce-overhead): 3 streams (default, attn_kv, mlp), 12 record\u2192wait arrows" in output
    root = ET.parse(tmp_path / "plan.svg").getroot()
    lanes = [g for g in root.iter(f"{SVG}g") if g.get("class") == "lane"]
    assert len(lanes) == 3
    arrows = {(p.get("data-from"), p.get("data-to")) for p in root.iter(f"{SVG}path") if "sync" in p.get("class", "")}
    assert arrows == syncs
    row = {g.get("data-node"): int(g.get("data-row")) for g in root.iter(f"{SVG}g") if g.get("data-row")}
    assert all(row[r] < row[w] for r, w in syncs)  # every wait below the record it waits for
    probe = read_probe(dump_dom(run / "report.html", "stage=fx-final&pane=lanes&probe=1", window=WINDOW))["lanes"]
    assert [r["stream"] for r in probe["l"]] == ["default stream", "attn_kv", "mlp"]
    assert {(a["from"], a["to"]) for a in probe["a"] if a["kind"] == "sync"} == syncs

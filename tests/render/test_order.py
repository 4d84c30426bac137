"""Program order in the pictures (issue 20, acceptance 1): on the seed model's stream plan
(passes/stream.yaml; fixtures/dumps/fx_after.json is its fx-final), scope_enter sits right above mm,
the record under abs and above scope_exit, the wait above sub and tied to it, and all four sit
inside (or outside) the stream_1 cluster as their semantics say, in dot, Graphviz's SVG and PNG,
and airctl's own layered layout."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from airctl.graph.model import Graph, Node
from airctl.io.read import read_graph
from airctl.render import render_to
from airctl.render.dot import dot_source, run_dot
from airctl.render.order import ANCHOR, CONSTRAINT, program_order
from airctl.render.svg import svg_text
from tests.io.dumps import DUMPS, FX_AFTER

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")
SVG = "{http://www.w3.org/2000/svg}"
PLAN = ("scope_enter_default", "mm", "abs_1", "record_default", "scope_exit_default")  # inside stream_1


def _pairs(graph: Graph) -> dict[tuple[str, str], int]:
    names = [n.name for n in graph.nodes]
    return {(names[s], names[d]): w for s, d, w in program_order(graph).edges}


def test_seed_plan_order_edges_anchor_each_side_effect_node() -> None:
    g = read_graph(FX_AFTER)
    order = program_order(g)
    pairs = _pairs(g)
    assert pairs[("scope_enter_default", "mm")] == ANCHOR  # right above the scope's first op
    assert pairs[("abs_1", "record_default")] == ANCHOR  # right under the op it follows
    assert pairs[("record_default", "scope_exit_default")] == ANCHOR
    assert pairs[("wait_default", "sub")] == ANCHOR  # right above the op it precedes
    assert pairs[("add", "wait_default")] < ANCHOR  # program order on its stream, little pull
    names = [n.name for n in g.nodes]
    assert {names[i] for i in order.pull} == {"scope_enter_default", "wait_default"}
    assert order.streams[names.index("scope_enter_default")] == "stream_1"  # drawn with the stream it opens
    assert not any("arg0_1" in p or "output" in p for p in pairs)  # inputs and output are never tied


def test_misplaced_records_and_waits_are_tied_to_where_they_are() -> None:
    """A wait at the tail of its stream and a record before any op: the other neighbour becomes the anchor."""
    g = Graph("g", "fx", [
        Node("x", "placeholder", kind="placeholder"),
        Node("rec", "air.record.default"),
        Node("a", "aten.relu.default", ["x"]),
        Node("w", "air.wait.default", ["rec"]),
        Node("output", "output", ["a"], kind="output"),
    ])
    pairs = _pairs(g)
    assert pairs[("rec", "a")] == ANCHOR  # no op before it: pinned to the op after it
    assert pairs[("w", "output")] == ANCHOR  # no op after it: right above the output
    assert pairs[("a", "w")] == CONSTRAINT


def test_ge_nodes_ordered_by_control_edges_are_not_tied() -> None:
    g = read_graph(DUMPS / "stream" / "optimized.pbtxt")
    assert program_order(g).edges == []  # GE orders with control edges already (Abs -> Sub)


def _box(d: str) -> tuple[float, float, float, float]:
    nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", d)]
    xs, ys = nums[0::2], nums[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def _graphviz_svg(root: ET.Element, graph: Graph) -> tuple[dict[str, tuple[float, float, float, float]],
                                                               dict[str, tuple[float, float, float, float]],
                                                               set[tuple[str, str]]]:
    names = {f"n{i}": n.name for i, n in enumerate(graph.nodes)}
    nodes, clusters, edges = {}, {}, set()
    for g in root.iter(f"{SVG}g"):
        title = g.find(f"{SVG}title")
        cls = g.get("class", "")
        if title is None:
            continue
        shape = g.find(f".//{SVG}path")
        if cls == "node" and title.text in names and shape is not None:
            nodes[names[title.text]] = _box(shape.get("d", ""))
        elif cls == "cluster" and shape is not None:
            clusters[title.text] = _box(shape.get("d", ""))
        elif "edge" in cls.split():
            s, d = title.text.split("->")
            edges.add((names[s], names[d]))
    return nodes, clusters, edges


def _inside(inner: tuple[float, float, float, float], outer: tuple[float, float, float, float]) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


def _assert_plan_positions(box: dict[str, tuple[float, float, float, float]], edges: set[tuple[str, str]],
                           cluster: tuple[float, float, float, float]) -> None:
    """y grows downwards; a box is (x0, y0, x1, y1)."""
    def bottom(n: str) -> float:
        return box[n][3]

    def top(n: str) -> float:
        return box[n][1]

    assert bottom("scope_enter_default") <= top("mm")
    assert bottom("abs_1") <= top("record_default") and bottom("record_default") <= top("scope_exit_default")
    assert bottom("wait_default") <= top("sub")
    assert ("wait_default", "sub") in edges and ("record_default", "wait_default") in edges
    for name in PLAN:
        assert _inside(box[name], cluster), name
    # the wait runs on the default stream: outside stream_1's cluster, its sync edge crosses the border
    assert not _inside(box["wait_default"], cluster)


@needs_dot
def test_dot_clusters_and_graphviz_svg_positions(tmp_path: Path) -> None:
    g = read_graph(FX_AFTER)
    source = dot_source(g)
    cluster = re.search(r"subgraph cluster_0 \{(.*?)\n  \}", source, re.S).group(1)
    assert 'label="stream: stream_1"' in cluster
    members = {g.nodes[int(i)].name for i in re.findall(r"^\s+n(\d+) \[", cluster, re.M)}
    assert members == set(PLAN)  # scope_enter is clustered with the stream it opens; the wait is not
    assert re.search(r"n7 -> n8 \[[^]]*style=\"dotted\"[^]]*weight=10", source)  # wait -> sub, an order edge
    svg = tmp_path / "plan.svg"
    run_dot(source, "svg", svg)
    nodes, clusters, edges = _graphviz_svg(ET.parse(svg).getroot(), g)
    _assert_plan_positions(nodes, edges, clusters["cluster_0"])


@needs_dot
def test_png_is_drawn_from_the_same_dot_layout(tmp_path: Path) -> None:
    g = read_graph(FX_AFTER)
    png, svg = render_to(g, "png", tmp_path / "plan.png"), render_to(g, "svg", tmp_path / "plan.svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png.read_bytes()[16:20], "big")
    svg_width = float(ET.parse(svg).getroot().get("width", "0").removesuffix("pt"))
    assert abs(width - svg_width * 96 / 72) <= 2  # one layout: Graphviz's points at 96 dpi


def _own_svg(text: str) -> tuple[dict[str, tuple[float, float, float, float]], list[tuple[float, float, float, float]]]:
    root = ET.fromstring(text.encode("utf-8"))
    nodes = {}
    for g in root.iter(f"{SVG}g"):
        title, rect = g.find(f"{SVG}title"), g.find(f"{SVG}rect")
        if title is not None and rect is not None and g.get("class") is None:
            x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
            nodes[title.text.split("\n")[0]] = (x, y, x + w, y + h)
    bands = []
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "scope":
            rect = g.find(f"{SVG}rect")
            x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
            bands.append((x, y, x + w, y + h))
    return nodes, bands


def test_own_layout_places_the_plan_the_same_way() -> None:
    g = read_graph(FX_AFTER)
    text = svg_text(g)
    nodes, bands = _own_svg(text)
    assert len(bands) == 1
    pairs = set(_pairs(g)) | {("record_default", "wait_default")}
    _assert_plan_positions(nodes, pairs, bands[0])
    assert 'class="edges-order"' in text


def test_own_layout_on_a_big_graph_keeps_every_scope_record_and_wait_in_place() -> None:
    from tests.render.test_collapse import _graph

    g = _graph(blocks=250)  # 2502 nodes: airctl's own layout, as dump --type svg uses past 2k nodes
    nodes, bands = _own_svg(svg_text(g))
    assert len(bands) == 250
    for b in (0, 125, 249):
        p = f"layers.{b}."
        # waits right above the op they precede, records right under the op they follow (one layer = 80 px)
        assert nodes[p + "w_in"][1] < nodes[p + "mm1"][1] and nodes[p + "mm1"][1] - nodes[p + "w_in"][1] == 80
        assert nodes[p + "rec_out"][1] - nodes[p + "relu"][1] == 80
        assert nodes[p + "rec_out"][1] < nodes[p + "exit"][1]
        assert nodes[p + "w_out"][1] < nodes[p + "add"][1]
        band = next(bx for bx in bands if _inside(nodes[p + "mm1"], bx))
        assert all(_inside(nodes[p + n], band) for n in ("enter", "w_in", "mm1", "relu", "rec_out", "exit"))
        assert not _inside(nodes[p + "w_out"], band) and not _inside(nodes[p + "add"], band)


@needs_dot
def test_control_characters_and_markup_survive_dot_and_its_svg(tmp_path: Path) -> None:
    from dataclasses import replace

    from tests.report.ledgers import EVIL, evil_graph

    g = evil_graph()
    name = EVIL + "\x01\x1b[31m\"\\n&"
    g.nodes[1] = replace(g.nodes[1], name=name, stream="s\x02")
    g.nodes[2] = replace(g.nodes[2], inputs=[name])
    g.nodes.insert(2, Node("w\x03", "air.wait.default", stream="s\x02"))
    out = render_to(g, "svg", tmp_path / "evil.svg")
    root = ET.parse(out).getroot()  # control characters would make the SVG unreadable
    text = out.read_text()
    assert EVIL not in text and "\x01" not in text and "\x02" not in text
    assert any("\\x01" in (t.text or "") for t in root.iter(f"{SVG}text"))
    for elem in root.iter():
        assert elem.tag not in (f"{SVG}script", f"{SVG}foreignObject")

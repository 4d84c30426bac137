"""airctl/profile/timeline_svg.py: lanes, boxes, arrows, escaping, PNG through Chromium."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from airctl.profile.timeline_svg import _ticks, format_time, render_svg, svg_to_png

from .timelines import seed_two_streams, with_race

SVG = "{http://www.w3.org/2000/svg}"
EVIL = "<script>alert(1)</script>"


def test_lanes_boxes_and_the_sync_arrow() -> None:
    svg = render_svg([seed_two_streams()], title="seed + stream.yaml")
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "stream default" in texts and "stream stream_1" in texts
    assert len([r for r in root.iter(f"{SVG}rect") if r.get("class") == "op"]) == 4
    assert len([r for r in root.iter(f"{SVG}rect") if r.get("class") == "marker"]) == 2  # record, wait
    (arrow,) = [ln for ln in root.iter(f"{SVG}line") if ln.get("class") == "sync"]
    assert arrow.get("marker-end") == "url(#arrow)"
    assert float(arrow.get("y1")) > float(arrow.get("y2"))  # from stream_1's lane up to the default lane


def test_every_text_is_escaped() -> None:
    t = with_race(EVIL)
    for e in t.events:
        if e.node == "sub":
            e.node, e.source = EVIL, f'"{EVIL}":1'
    t.graph = EVIL
    svg = render_svg([t], title=EVIL)
    assert "<script" not in svg
    assert "&lt;script&gt;" in svg
    root = ET.fromstring(svg)  # still well-formed XML
    assert any(EVIL in (tt.text or "") for tt in root.iter(f"{SVG}title"))
    assert any(ln.get("class") == "race" for ln in root.iter(f"{SVG}line"))


def test_axis_units() -> None:
    assert format_time(0.0025) == "2.5 ms" and format_time(2e-5) == "20 µs" and format_time(0) == "0"
    ticks = _ticks(0.0, 0.004)
    assert ticks[0] == 0.0 and len(ticks) >= 5 and ticks[-1] <= 0.004 + 1e-12


def test_empty_picture() -> None:
    assert "no timed ops" in render_svg([])


@pytest.mark.skipif(not shutil.which("chromium"), reason="needs chromium")
def test_png(tmp_path: Path) -> None:
    svg = tmp_path / "t.svg"
    svg.write_text(render_svg([seed_two_streams()]), encoding="utf-8")
    png = svg_to_png(svg, tmp_path / "t.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

"""Assemble the single-file HTML viewer: inline CSS, airctl's own JS, and the payload as JSON.

The JS is several files by job (``viewer/*.js``: state, diff view, stage panel, details, provenance,
the panes, the graph pane, the lane pane, the probe, other tabs, the assignment tab, start);
:func:`viewer_js` inlines them in the fixed order ``VIEWER_JS``.

The payload sits in ``<script type="application/json">`` with ``<``, ``>`` and ``&`` written as
``\\u003c``/``\\u003e``/``\\u0026``, so no string in a graph (``</script>``, ``<!--``) can end the block;
the JS reads it with ``JSON.parse`` and writes only through ``textContent`` and the canvas. A
payload over :data:`COMPRESS_ABOVE` (a 6k-node model's is tens of MB) is stored gzip-compressed
and base64-encoded instead (``type="application/gzip+base64"``; the browser inflates it with its
built-in ``DecompressionStream``), which makes the page about ten times smaller;
:func:`payload_of` reads either form back. The only markup built here from run data (the title)
is escaped with :func:`airctl.render.text.esc`. The profile timeline
SVG is embedded as a base64 ``<img>``: an SVG shown as an image cannot run scripts.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from functools import cache
from pathlib import Path
from typing import Any

from airctl.diff import DiffReport
from airctl.graph.model import Graph
from airctl.modes import Mode
from airctl.render.style import EDGE_STYLE
from airctl.render.text import esc
from airctl.report.payload import Group, empty_diff

HERE = Path(__file__).parent
MAX_TIMELINE_BYTES = 20 * 1024 * 1024
COMPRESS_ABOVE = 256 << 10  # payload JSON characters above which the page carries it gzip-compressed
JSON_TYPE, GZIP_TYPE = "application/json", "application/gzip+base64"

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; \
style-src 'unsafe-inline'; img-src data:">
<title>@@title@@</title>
<style>@@css@@</style>
</head>
<body>
<header><h1 id="title">@@title@@</h1><span id="run-line" class="run"></span></header>
<nav class="tabs">
<button data-tab="graph" class="active">Graph</button>
<button data-tab="findings" id="tab-btn-findings">Findings</button>
<button data-tab="profile" id="tab-btn-profile">Profile</button>
<button data-tab="assignment" id="tab-btn-assignment">Assignment</button>
<button data-tab="run">Run</button>
</nav>
<main>
<section class="tab active" id="tab-graph">
 <div class="side">
  <label>graph <select id="graph-select"></select></label>
  <div class="stage-head"><h2>Stages</h2>
   <label title="also list passes that did not change the graph"><input type="checkbox" id="show-all"> show all</label>
  </div>
  <div id="hidden-count" class="muted"></div>
  <ul id="stages"></ul>
  <p class="muted">j/k or \u2191/\u2193 step through stages \u00b7 / search \u00b7 f fit \u00b7
   g/l/b graph, lanes, both \u00b7 drag to pan, wheel to zoom</p>
 </div>
 <div id="centre" class="pane-graph">
  <div class="pane" id="graph-pane"><canvas id="canvas"></canvas><div id="legend"></div></div>
  <div class="pane" id="lanes-pane"><canvas id="lanes-canvas"></canvas></div>
  <div id="toolbar"><button id="fit">fit</button>
   <span id="pane-switch" title="the graph, its stream lanes, or both (g / l / b)"><button data-pane="graph"
    class="active">graph</button><button data-pane="lanes">lanes</button><button data-pane="both">both</button></span>
   <button id="fold" title="fold every unfolded run of ops" style="display:none">fold</button>
   <span id="node-count"></span></div>
 </div>
 <div class="side right">
  <input id="search" type="search" placeholder="search name or op" autocomplete="off">
  <div id="hit-count"></div>
  <ul id="hits"></ul>
  <div id="details"></div>
 </div>
</section>
<section class="tab" id="tab-findings"><div class="pad" id="findings"></div></section>
<section class="tab" id="tab-profile"><div class="pad" id="profile">@@timeline@@</div></section>
<section class="tab" id="tab-assignment"><div class="pad" id="assignment"></div></section>
<section class="tab" id="tab-run"><div class="pad" id="run"></div></section>
</main>
<noscript>This report needs JavaScript to draw the graphs.</noscript>
<script type="@@data_type@@" id="airctl-data">@@data@@</script>
<script>@@js@@</script>
</body>
</html>
"""


# the viewer's files (airctl/report/viewer/), inlined in this order into one function scope:
# state.js declares what the others share, canvas.js the panes that draw.js (graph) and lanes.js (lanes)
# add, start.js starts the page
VIEWER_JS = ("state.js", "diff.js", "stages.js", "details.js", "provenance.js", "canvas.js", "draw.js", "lanes.js",
             "probe.js", "tabs.js", "assignment.js", "start.js")


@cache
def _asset(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


# Hands the payload's JSON text to the viewer: as it is, or inflated from gzip+base64 first.
LOADER_JS = """(function (viewer) {
  var el = document.getElementById("airctl-data");
  if (el.type !== "%s") { viewer(el.textContent); return; }
  var bin = atob(el.textContent.trim()), bytes = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  var inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  new Response(inflated).text().then(viewer, function (e) {
    document.body.textContent = "report.html: the graph data could not be read (" + e + ")";
  });
})""".replace("%s", GZIP_TYPE)


@cache
def viewer_js() -> str:
    """The viewer's JS for the page's one ``<script>``: every file of ``VIEWER_JS`` in order, in one
    strict-mode function scope (so they share it, and nothing leaks into ``window``), called with
    the payload's JSON text by :data:`LOADER_JS`."""
    parts = [f"/* ---- viewer/{name} ---- */\n{_asset('viewer/' + name)}" for name in VIEWER_JS]
    return LOADER_JS + '(function (dataText) {\n  "use strict";\n' + "".join(parts) + "});\n"


def payload_json(obj: Any) -> str:
    """The payload as compact JSON; NaN and infinities become the strings ``"NaN"``, ``"Infinity"``,
    ``"-Infinity"`` (JSON has no such numbers). The payload's builder already wrote graph
    attributes that way, so the slow path (a pass over every string) is for anything else.

    The ``groups`` (nearly all of a big report: every snapshot's arrays, node details and lane
    views, built by :mod:`airctl.report.payload` with every float already spelt) are encoded by
    orjson when it is installed, about six times faster, and written last."""
    groups = obj.get("groups") if isinstance(obj, dict) else None
    fast = _orjson_text(groups) if groups else None
    if fast is None:
        return _json_text(obj)
    rest = _json_text({k: v for k, v in obj.items() if k != "groups"})
    return f'{rest[:-1]}{"," if len(rest) > 2 else ""}"groups":{fast}}}'


def _json_text(obj: Any) -> str:
    try:  # check_circular off: the payload is a tree the report built (no container holds itself)
        return json.dumps(obj, separators=(",", ":"), default=str, allow_nan=False, check_circular=False)
    except ValueError:
        text = json.dumps(obj, separators=(",", ":"), default=str)
    return _NON_FINITE.sub(lambda m: m.group(0) if m.group(0)[0] == '"' else f'"{m.group(0)}"', text)


def _orjson_text(value: Any) -> str | None:
    """``value`` as JSON by orjson, or None (not installed, or a value it cannot encode: an integer
    over 64 bits): the caller then uses :mod:`json`."""
    try:
        import orjson
    except ImportError:
        return None
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode("utf-8")
    except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
        return None


_NON_FINITE = re.compile(r'"(?:[^"\\]|\\.)*"|-?Infinity|NaN')


def _script_safe(text: str) -> str:
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def script_payload(obj: Any, compress_above: int = COMPRESS_ABOVE) -> tuple[str, str]:
    """``(type, text)`` of the payload's ``<script>`` element: JSON, or gzip+base64 when it is large."""
    text = payload_json(obj)
    if len(text) <= compress_above:
        return JSON_TYPE, _script_safe(text)
    c = zlib.compressobj(1, zlib.DEFLATED, 31)  # level 1: ~8x smaller at ~100 MB/s
    packed = c.compress(text.encode("utf-8")) + c.flush()
    return GZIP_TYPE, base64.b64encode(packed).decode("ascii")


def payload_of(page: str) -> Any:
    """The payload of a report page written by :func:`html_page` (either form)."""
    m = re.search(r'<script type="([^"]+)" id="airctl-data">(.*?)</script>', page, re.S)
    if m is None:
        raise ValueError("no airctl-data element in the page")
    if m.group(1) == GZIP_TYPE:
        return json.loads(zlib.decompress(base64.b64decode(m.group(2)), 31))
    return json.loads(m.group(2))


def timeline_img(svg: bytes | None) -> str:
    if not svg or len(svg) > MAX_TIMELINE_BYTES:
        return ""
    b64 = base64.b64encode(svg).decode("ascii")
    return ('<div id="timeline"><h2>Timeline</h2>'
            f'<img alt="stream timeline" src="data:image/svg+xml;base64,{b64}"></div>')


def html_page(payload: dict[str, Any], timeline_svg: bytes | None = None,
              compress_above: int = COMPRESS_ABOVE) -> str:
    """The whole report page for ``payload`` (see :mod:`airctl.report.payload`)."""
    payload = {**payload, "style": {"edges": {k: [c, [float(d) for d in dash.split(",")] if dash else [], w]
                                              for k, (c, dash, w) in EDGE_STYLE.items()}}}
    data_type, data = script_payload(payload, compress_above)
    values = {"title": esc(payload.get("title") or "airctl"),
              "css": _asset("viewer.css"), "js": viewer_js(), "data": data, "data_type": data_type,
              "timeline": timeline_img(timeline_svg)}
    # one pass over the template: inserted text is never scanned for markers again
    return re.sub(r"@@(\w+)@@", lambda m: values[m.group(1)], TEMPLATE)


def _stage(index: int, name: str, graph: Graph, snap: int, diff: dict[str, Any] | None,
           group: int = 0) -> dict[str, Any]:
    return {"index": index, "name": name, "changed": None, "nodes": len(graph), "node_delta": None, "seconds": None,
            "dialect": graph.dialect, "group": group, "snap": snap, "diff": diff}


def graph_page(graph: Graph, status: dict[str, str] | None = None, title: str | None = None,
               mode: Mode = Mode.MAX_AUTOTUNE, pane: str | None = None) -> str:
    """A standalone viewer for one graph; ``status`` (name -> added/removed/changed) colours nodes;
    ``mode``: the semantics of its lane view; ``pane``: what it opens on (graph, lanes or both)."""
    group = Group("graph", graph.dialect, mode=mode)
    snap, _ = group.add(graph)
    diff = None
    if status:
        pos = group.key_index
        diff = empty_diff()
        for name, st in status.items():
            if name in pos and st in ("added", "removed", "changed"):
                diff[st].append([pos[name], st] if st == "changed" else pos[name])
                diff["summary"][st] += 1
    payload = {
        "title": title or f"{graph.name} ({graph.dialect}, {len(graph)} nodes)",
        "run": {},
        "graphs": [{"id": graph.name, "kind": graph.dialect, "name": None,
                    "stages": [_stage(0, graph.name, graph, snap, diff)]}],
        "groups": [group.to_json()],
        "findings": [],
        "pane": pane,
    }
    return html_page(payload)


def diff_page(a: Graph, b: Graph, report: DiffReport, title: str | None = None) -> str:
    """Two stages, A then B, laid out together; B shows the diff (removed nodes as ghosts)."""
    run = {"a": {"name": a.name, "nodes": len(a)}, "b": {"name": b.name, "nodes": len(b)},
           "summary": report.summary()}
    return diffs_page([("diff", a, b, report)], title or f"diff: {a.name} \u2192 {b.name}", run)


def diffs_page(pairs: list[tuple[str, Graph, Graph, DiffReport]], title: str,
               run: dict[str, Any] | None = None) -> str:
    """Several diffs in one viewer (``airctl diff RUN_A RUN_B``): one entry of the graph selector
    per ``(label, a, b, report)``, each A then B on one layout, B showing the diff."""
    graphs, groups = [], []
    for label, a, b, report in pairs:
        group = Group(label, b.dialect)
        snap_a, _ = group.add(a)
        snap_b, diff = group.add(b, report)
        graphs.append({"id": label, "kind": None, "name": None,
                       "stages": [_stage(0, f"A: {a.name}", a, snap_a, None, len(groups)),
                                  _stage(1, f"B: {b.name}", b, snap_b, diff, len(groups))]})
        groups.append(group.to_json())
    return html_page({"title": title, "run": run or {}, "graphs": graphs, "groups": groups, "findings": []})

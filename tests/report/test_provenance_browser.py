"""report.html's provenance links, both ways, clicked in headless Chromium (issue 59, acceptance 2):
a lane task -> its FX node, the pass that moved it, its GE ops, its profiled task and the source
line; the source line -> every node and task it made; a GE op -> its FX node; and the chain the page
shows is the one ``airctl show --node`` prints (tests/report/test_provenance_data.py). Untrusted
names stay text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from airctl.report import write_report
from tests.report.browser import need_chromium, run_script
from tests.report.ledgers import EVIL, evil_ledger, make_ledger
from tests.report.test_browser import PWNED

pytestmark = pytest.mark.slow  # drives Chromium (seconds a test)

WINDOW = (1400, 900)
REPO = Path(__file__).resolve().parents[2]
SOURCE = "fixtures/dumps/make_dumps.py:59"  # mm's line in the dumps' model (tests/io/dumps.py)
# as the dumps recorded it: the folder they were made in, whatever checkout the tests run from
RECORDED = next(n["source"] for n in json.loads((REPO / "fixtures" / "dumps" / "fx_after.json").read_text())["nodes"]
                if n["name"] == "mm")
MOVED = "moved by user pass mm-abs-on-stream1 (default -> stream_1) \u2192 yaml:mm-abs-on-stream1"


def ledger_with_tasks(out: Path) -> Path:
    """tests/report/ledgers.make_ledger's run with a profile trace: mm ran twice on stream_1, MatMul
    (a task named after its GE op) once, and a host event that is no kernel."""
    root = make_ledger(out, profile=True)
    events = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "stream stream_1"}},
              {"ph": "X", "name": "mm#0", "pid": 1, "tid": 2, "ts": 0, "dur": 40.0, "args": {"node": "mm"}},
              {"ph": "X", "name": "mm#1", "pid": 1, "tid": 2, "ts": 100, "dur": 60.0, "args": {"node": "mm"}},
              {"ph": "X", "name": "launch", "cat": "host", "pid": 1, "tid": 9, "ts": 0, "dur": 5.0}]
    (root / "profile" / "trace.json").write_text(json.dumps({"traceEvents": events}))
    summary = json.loads((root / "profile" / "summary.json").read_text())
    summary["critical_path"] = [  # a node's task, then a task named after its GE op
        {"node": "mm#1", "op": "aten.mm.default", "stream": "stream_1", "dur_s": 6e-5, "via": "start",
         "source": RECORDED},
        {"node": "Abs", "op": "Abs", "stream": "stream_1", "dur_s": 1e-5, "via": "data", "source": None}]
    (root / "profile" / "summary.json").write_text(json.dumps(summary))
    write_report(root)
    return root


CLICK_LANE = """(function (name) {
  var item = document.querySelector('#probe div[data-pane="lanes"] i[data-name="' + name + '"]');
  if (!item) return null;
  var canvas = document.getElementById("lanes-canvas"), r = canvas.getBoundingClientRect();
  var x = r.left + (+item.dataset.x) + (+item.dataset.w) / 2, y = r.top + (+item.dataset.y) + (+item.dataset.h) / 2;
  canvas.dispatchEvent(new MouseEvent("mousedown", {clientX: x, clientY: y, bubbles: true}));
  window.dispatchEvent(new MouseEvent("mouseup", {clientX: x, clientY: y}));
  return true;
})"""

WALK = """(function () {
  function details() {
    var d = document.getElementById("details");
    return {h2: (d.querySelector("h2") || {}).textContent, text: d.textContent,
            hash: decodeURIComponent(location.hash),
            links: Array.from(d.querySelectorAll("a.prov-go")).map(function (a) {
              return [a.dataset.stage, a.dataset.node];
            }),
            events: Array.from(d.querySelectorAll("td.prov-event")).map(function (e) { return e.textContent; }),
            tasks: Array.from(d.querySelectorAll(".prov-task")).map(function (e) { return e.textContent; })};
  }
  var out = {clicked: (CLICK_LANE)("mm")};
  if (!out.clicked) return null;  // the probe drew no lane pane yet: run_script loads the page again
  out.lane = details();
  document.querySelector("#details a.prov-source").click();
  out.source = details();
  document.querySelector('#details li.prov-node a.prov-go[data-node="MatMul"]').click();
  out.ge = details();
  document.querySelector('#details td a.prov-go[data-node="mm"]').click();
  out.back = details();
  return JSON.stringify(out);
})()""".replace("CLICK_LANE", CLICK_LANE)


def test_lane_task_to_source_and_back(tmp_path: Path) -> None:
    need_chromium()
    root = ledger_with_tasks(tmp_path / "runs")
    found = run_script(root / "report.html", WALK, "stage=fx-final&pane=lanes&probe=1", window=WINDOW)
    assert found is not None, "mm is not in the lane pane"
    out = json.loads(found)
    lane = out["lane"]
    assert lane["h2"] == "mm" and "node=mm" in lane["hash"]
    # the pass that moved it, the link to that stage; its GE ops; its two profiled runs; the source line
    assert lane["events"] == [MOVED]
    assert ["yaml:mm-abs-on-stream1", "mm"] in lane["links"] and ["fx-final", "mm"] in lane["links"]
    assert ["ge-original", "MatMul"] in lane["links"] and ["ge-optimized", "MatMul"] in lane["links"]
    assert lane["tasks"] == ["mm on stream_1: 2 run(s), 0.100 ms"]
    assert SOURCE in lane["text"]
    # the source line: every node and task it made (mm alone on line 59), and the hash names it
    src = out["source"]
    assert src["h2"].startswith("source ") and src["h2"].endswith(SOURCE) and "source=" in src["hash"]
    assert "1 node, 1 profiled task" in src["text"]
    assert src["links"] == [["fx-final", "mm"], ["ge-original", "MatMul"], ["ge-optimized", "MatMul"]]
    assert src["tasks"] == ["task mm on stream_1: 2 run(s), 0.100 ms"]
    # a GE op: opens its stage with the op selected, and leads back to its FX node
    assert out["ge"]["h2"] == "MatMul" and "stage=4" in out["ge"]["hash"] and "node=MatMul" in out["ge"]["hash"]
    assert ["fx-final", "mm"] in out["ge"]["links"]
    assert out["back"]["h2"] == "mm" and "stage=3" in out["back"]["hash"]


def test_provenance_of_untrusted_names_is_text(tmp_path: Path) -> None:
    need_chromium()
    page = write_report(evil_ledger(tmp_path / "runs"))
    script = """(function () {
      var a = document.querySelector("#details a.prov-source");
      var before = document.getElementById("details").textContent;
      if (a) a.click();
      return JSON.stringify({found: !!a, before: before, after: document.getElementById("details").textContent,
                             assignment: document.getElementById("assignment").textContent,
                             html: document.documentElement.outerHTML});
    })()"""
    from urllib.parse import quote

    fragment = f"stage={quote('yaml:' + EVIL)}&node={quote(EVIL)}"
    out = json.loads(run_script(page, script, fragment))
    assert out["found"] and "created by user pass" in out["before"]
    assert 'source "><svg onload=alert(4)>:1' in out["after"] and EVIL in out["after"]
    assert EVIL in out["assignment"] and "<img src=x onerror=" in out["assignment"]  # the op, as text
    assert not PWNED.search(out["html"]) and not re.search(r"<svg onload", out["html"])


ASSIGNMENT = """(function () {
  var tab = document.getElementById("assignment"), out = {};
  out.heads = Array.from(tab.querySelectorAll("h2")).map(function (h) { return h.textContent; });
  out.totals = Array.from(tab.querySelectorAll("a.assign-cat")).map(function (a) { return a.textContent; });
  tab.querySelector('a.assign-cat[data-category="stream control"]').click();
  out.filtered = Array.from(tab.querySelectorAll("tr[data-category]")).map(function (r) {
    return r.firstChild.textContent;
  });
  out.stat = tab.lastChild.textContent;
  tab.querySelector('a.assign-cat:not([data-category])').click();
  Array.from(tab.querySelectorAll("a.prov-go")).filter(function (a) { return a.dataset.node === "abs_1"; })[0].click();
  var d = document.getElementById("details");
  out.tab = document.querySelector("nav.tabs button.active").dataset.tab;
  out.h2 = d.querySelector("h2").textContent;
  out.events = Array.from(d.querySelectorAll("td.prov-event")).map(function (e) { return e.textContent; });
  out.hash = decodeURIComponent(location.hash);
  return JSON.stringify(out);
})()"""


def test_assignment_tab_and_its_links(tmp_path: Path) -> None:
    """The Assignment tab: totals by category (one filters the list), GE's statistics absent under
    sim, and a node's name opening it in the Graph tab with its origin chain."""
    need_chromium()
    root = ledger_with_tasks(tmp_path / "runs")
    out = json.loads(run_script(root / "report.html", ASSIGNMENT, "tab=assignment"))
    assert out["heads"] == ["graph 1-inference at fx-final"]
    assert out["totals"] == ["converted 4", "stream control 2", "scope 2", "input 1", "output 1", "all"]
    assert out["filtered"] == ["record_default", "wait_default"]
    assert out["stat"].startswith("GE compile statistics (absent): absent: no fusion_result.json")
    assert out["tab"] == "graph" and out["h2"] == "abs_1" and "stage=3" in out["hash"]
    assert out["events"] == [MOVED]


PROFILE_TAB = """(function () {
  var box = document.getElementById("profile"), out = {};
  out.links = Array.from(box.querySelectorAll("a.prov-go")).map(function (a) { return [a.textContent, a.dataset.stage,
                                                                                         a.dataset.node]; });
  box.querySelector("a.prov-source").click();
  out.tab = document.querySelector("nav.tabs button.active").dataset.tab;
  out.source = document.getElementById("details").textContent;
  document.querySelector("nav.tabs button[data-tab=profile]").click();
  Array.from(box.querySelectorAll("a.prov-go")).filter(function (a) { return a.textContent === "Abs"; })[0].click();
  out.ge = [document.querySelector("#details h2").textContent, decodeURIComponent(location.hash)];
  return JSON.stringify(out);
})()"""


def test_profile_tab_tasks_link_to_nodes_and_lines(tmp_path: Path) -> None:
    """The Profile tab's critical path: a task's node opens its chain, its source line its list."""
    need_chromium()
    root = ledger_with_tasks(tmp_path / "runs")
    out = json.loads(run_script(root / "report.html", PROFILE_TAB, "tab=profile"))
    assert out["links"] == [["mm#1", "fx-final", "mm"], ["Abs", "ge-original", "Abs"]]
    assert out["tab"] == "graph" and out["source"].startswith("source " + RECORDED)
    assert "1 node, 1 profiled task" in out["source"]
    assert out["ge"][0] == "Abs" and "stage=4" in out["ge"][1]

"""Small ledgers for report tests, written through LedgerWriter from the committed dumps (no compiling)."""

from __future__ import annotations

import json
from pathlib import Path

from airctl.graph.model import Graph, Node
from airctl.io.read import read_graph
from airctl.ledger.writer import LedgerWriter
from tests.io.dumps import DUMPS, FX_AFTER, FX_BEFORE

EVIL = "<script>alert(1)</script>"
EVIL_OP = "<img src=x onerror=\"document.body.setAttribute('data-pwned','op')\">"
EVIL_ATTR = "</script><script>document.body.setAttribute('data-pwned','attr')</script>"


def make_ledger(out: Path, findings: bool = True, profile: bool = False) -> Path:
    """A ledger with an FX pass sequence (one pass unchanged) and two GE stages."""
    w = LedgerWriter.create(out, "demo", command="compile", mode="max-autotune", status="ok")
    w.graph("1-inference", "inference", name="graph_1")
    before, after = read_graph(FX_BEFORE), read_graph(FX_AFTER)
    w.add_stage("1-inference", "aot-inference", before)
    w.add_stage("1-inference", "yaml:mm-abs-on-stream1", after, changed=True, seconds=0.01)
    w.add_stage("1-inference", "after:optimize_noop_ops", after, changed=False, seconds=0.001)
    w.add_stage("1-inference", "fx-final", after)
    w.add_stage("1-inference", "ge-original", read_graph(DUMPS / "plain" / "optimized.txt"))
    w.add_stage("1-inference", "ge-optimized", read_graph(DUMPS / "stream" / "optimized.txt"))
    if findings:
        w.set(findings=[{"rule": "wait_dropped_at_tail", "severity": "error", "mode": "max-autotune",
                                "nodes": ["wait_default"], "source": None, "message": "wait_default has no op after it",
                                "hint": "add a consumer", "ref": "R8", "graph": "1-inference",
                                "stage": "yaml:mm-abs-on-stream1"}])
    w.finish()
    if profile:
        prof = w.root / "profile"
        prof.mkdir()
        (prof / "summary.json").write_text(json.dumps({
            "streams": [{"stream": "stream_1", "busy_s": 0.5, "idle_s": 0.1}],
            "overlap_s": 0.25, "critical_path": ["mm", "abs_1"], "races": [], "trace": "profile/trace.json"}))
        (prof / "timeline.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
                                           '<script>document.body.setAttribute("data-pwned","svg")</script>'
                                           '<rect width="10" height="10" fill="red"/></svg>')
    return w.root


def evil_graph() -> Graph:
    """Markup in every field the renderers show."""
    return Graph("--><script>alert(5)</script><!--<b>g</b>", "fx", [
        Node("x", "placeholder", kind="placeholder"),
        Node(EVIL, EVIL_OP, inputs=["x"], attrs={"k": EVIL_ATTR, "v": float("nan")}, stream="<i>s</i>",
             source='"><svg onload=alert(4)>:1', module="<u>m</u>"),
        Node("out", "output", inputs=[EVIL], kind="output"),
    ])


def evil_ledger(out: Path) -> Path:
    w = LedgerWriter.create(out, "evil", command="compile", status="ok")
    w.graph("1-inference", "inference", name=EVIL)
    g = evil_graph()
    plain = Graph(g.name, "fx", [g.nodes[0], Node("out", "output", inputs=["x"], kind="output")])
    w.add_stage("1-inference", "aot-inference", plain)
    w.add_stage("1-inference", f"yaml:{EVIL}", g, changed=True)
    w.set(findings=[{"rule": EVIL, "severity": "error", "nodes": [EVIL], "message": EVIL_ATTR,
                            "graph": "1-inference", "stage": f"yaml:{EVIL}"}])
    w.finish()
    return w.root

"""report.html's provenance payload (fast: ledgers written without compiling): one computation with
``airctl show --node`` (the page's chain of every node is the one the command prints), the FX
stages' matches taken from the report's diffs, and a run with a missing snapshot still reported."""

from __future__ import annotations

from pathlib import Path

from airctl.diff.chain import graph_chains
from airctl.diff.chain_graphs import Snapshots
from airctl.ledger.reader import Ledger
from airctl.pipeline.show import node_chains
from airctl.report import write_report
from airctl.report.ledger_data import PAIRS, graphs_payload
from airctl.report.page import payload_of
from tests.report.ledgers import make_ledger
from tests.report.test_provenance_browser import ledger_with_tasks


def test_the_page_carries_show_nodes_chain(tmp_path: Path) -> None:
    """One computation: the report's chain of every node is the chain ``show --node`` prints."""
    root = ledger_with_tasks(tmp_path / "runs")
    prov = payload_of((root / "report.html").read_text())["provenance"]
    graph = prov["graphs"]["1-inference"]
    strings = graph["strings"]
    by_name = {row[0][1]: row for row in graph["chains"]}
    assert set(by_name) == {"arg0_1", "mm", "abs_1", "add", "sub", "output", "scope_enter_default", "record_default",
                            "scope_exit_default", "wait_default"}
    for name in by_name:
        (chain,) = node_chains(root, name)["chains"]
        row = by_name[name]
        assert [[graph["stages"].index(e["stage"]), e["event"], e["detail"]] for e in chain["changes"]] == \
            [[e[0], e[1], e[3]] for e in row[1]]
        assert chain["source"] == (strings[row[4]] if row[4] >= 0 else None)
        assert [g["name"] for g in chain["ge_ops"]] == row[7][1::4]
        assert [[t["task"], t["stream"], t["count"], t["total_us"]] for t in chain["tasks"]] == row[9]
    assert by_name["mm"][9] == [["mm", "stream_1", 2, 100.0]]
    assert prov["profile"].endswith("trace.json") and prov["errors"] == []
    assert PAIRS not in payload_of((root / "report.html").read_text())


def test_the_reports_matches_are_the_chains_matches(tmp_path: Path) -> None:
    """The FX stages' pairs the report's diffs made are what the chains would match themselves."""
    root = make_ledger(tmp_path / "runs")
    led = Ledger.open(root)
    pairs = graphs_payload(led)[PAIRS]
    # aot-inference -> yaml:mm-abs-on-stream1 (the unchanged pass shares its file) -> fx-final
    assert len(pairs) == 2
    mine, theirs = Snapshots(led), Snapshots(led, None, pairs)
    stages = {s.file: s for s in led.stages("1-inference")}
    for a, b in pairs:
        assert mine.a_to_b(stages[a], stages[b]) == theirs.a_to_b(stages[a], stages[b])
    assert [c.to_json() for c in graph_chains(led, "1-inference", None, theirs)[1]] == \
        [c.to_json() for c in graph_chains(led, "1-inference")[1]]


def test_a_missing_snapshot_leaves_the_graph_out_and_says_so(tmp_path: Path) -> None:
    root = make_ledger(tmp_path / "runs")
    led = Ledger.open(root)
    final = next(s for s in led.stages("1-inference") if s.name == "fx-final")
    (root / final.file).unlink()
    page = write_report(root)
    payload = payload_of(page.read_text())
    assert payload["provenance"]["graphs"] == {}
    (error,) = payload["provenance"]["errors"]
    assert error.startswith("graph 1-inference: ") and Path(final.file).name in error
    assert "error" in payload["assignment"]

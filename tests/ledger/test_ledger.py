"""The ledger contract: run folders never overwrite, index.json is always valid, stages load back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airctl.errors import LedgerError
from airctl.graph.model import Graph, Node
from airctl.ledger.reader import Ledger
from airctl.ledger.writer import LedgerWriter


def _graph(n: int) -> Graph:
    nodes = [Node("x", "placeholder", kind="placeholder")]
    nodes += [Node(f"n{i}", "aten.abs.default", inputs=[nodes[-1].name]) for i in range(n)]
    return Graph("g", "fx", nodes)


def test_runs_never_overwrite_and_index_updates_per_stage(tmp_path: Path) -> None:
    a = LedgerWriter.create(tmp_path, "model")
    b = LedgerWriter.create(tmp_path, "model")
    assert a.root != b.root
    a.graph("1-inference", "inference")
    a.add_stage("1-inference", "dynamo", _graph(2))
    a.sync()
    on_disk = json.loads((a.root / "index.json").read_text())
    assert on_disk["status"] == "running"
    assert on_disk["graphs"][0]["stages"][0]["nodes"] == 3
    a.add_stage("1-inference", "after:p", _graph(3), changed=True, seconds=0.1)
    a.fail("boom")
    a.finish("failed")
    index = json.loads((a.root / "index.json").read_text())
    assert index["status"] == "failed" and index["error"] == "boom"
    assert index["graphs"][0]["stages"][1]["node_delta"] == 1


def test_reader_finds_and_loads_stages(tmp_path: Path) -> None:
    w = LedgerWriter.create(tmp_path, "m")
    w.graph("1-inference", "inference")
    w.add_stage("1-inference", "dynamo", _graph(1))
    w.add_stage("1-inference", "fx-final", _graph(2))
    w.finish()
    led = Ledger.open(w.root)
    assert led.find_stage().name == "fx-final"
    assert len(led.load(led.find_stage("dynamo"))) == 2
    with pytest.raises(LedgerError) as info:
        led.find_stage("nope")
    assert "dynamo" in info.value.hint


def test_reader_rejects_non_ledgers(tmp_path: Path) -> None:
    with pytest.raises(LedgerError):
        Ledger.open(tmp_path)
    (tmp_path / "index.json").write_text("{oops")
    with pytest.raises(LedgerError) as info:
        Ledger.open(tmp_path)
    assert info.value.line == 1

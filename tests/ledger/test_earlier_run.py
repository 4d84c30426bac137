"""A command that needs a graph, given a run that has none (interrupted, failed before Dynamo), names
the earlier run of the same ``--out`` that has graphs and how to pick it (airctl/ledger/reader.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from airctl.errors import LedgerError
from airctl.ledger.reader import Ledger

FX = Path(__file__).resolve().parents[2] / "fixtures" / "checks" / "ok" / "seed_docs.json"


def _run(out: Path, run_id: str, status: str, created: str, graphs: bool) -> Path:
    root = out / run_id
    (root / "graphs" / "g0").mkdir(parents=True)
    stages = []
    if graphs:
        shutil.copy(FX, root / "graphs" / "g0" / "000-fx-final.json")
        stages = [{"index": 0, "name": "fx-final", "dialect": "fx", "file": "graphs/g0/000-fx-final.json"}]
    index = {"status": status, "mode": "max-autotune", "command": "compile", "created": created,
             "graphs": [{"id": "g0", "kind": "inference", "name": "graph_1", "stages": stages}] if graphs else []}
    (root / "index.json").write_text(json.dumps(index))
    return root


def test_a_run_without_graphs_names_the_earlier_run_that_has_them(tmp_path: Path) -> None:
    _run(tmp_path, "20261127-100000-m-aaaa", "ok", "2026-11-27T10:00:00", graphs=True)
    bad = _run(tmp_path, "20261127-110000-m-bbbb", "interrupted", "2026-11-27T11:00:00", graphs=False)
    with pytest.raises(LedgerError) as info:
        Ledger.open(bad).find_stage()
    assert "the run interrupted before Dynamo produced a graph" in info.value.message
    assert info.value.hint == ("run 20261127-100000-m-aaaa (compile, ok) has graphs: "
                               "`--run 20261127-100000-m-aaaa` picks it")


def test_with_no_earlier_run_the_hint_says_to_compile_again(tmp_path: Path) -> None:
    bad = _run(tmp_path, "20261127-110000-m-bbbb", "failed", "2026-11-27T11:00:00", graphs=False)
    with pytest.raises(LedgerError) as info:
        Ledger.open(bad).find_stage()
    assert "airctl compile MODEL.py" in str(info.value.hint)

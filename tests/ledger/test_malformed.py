"""A malformed ledger is a LedgerError naming index.json and where in it — never a traceback — for
every command that reads one; stage files may not leave the ledger, through ``..`` or a link."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from airctl.cli.main import run
from airctl.errors import LedgerError
from airctl.ledger.reader import Ledger
from tests.io.dumps import FX_AFTER, FX_BEFORE


def _index() -> dict[str, Any]:
    stages = [{"index": 0, "name": "aot-inference", "dialect": "fx", "changed": None, "nodes": 6,
               "file": "graphs/g0/000-aot.json", "text": None, "seconds": None},
              {"index": 1, "name": "fx-final", "dialect": "fx", "changed": True, "nodes": 10,
               "file": "graphs/g0/001-fx-final.json", "text": None, "seconds": 0.1}]
    return {"status": "ok", "mode": "max-autotune",
            "graphs": [{"id": "g0", "kind": "inference", "name": "graph_1", "stages": stages}]}


def _ledger(root: Path, index: dict[str, Any] | None = None) -> Path:
    (root / "graphs" / "g0").mkdir(parents=True)
    shutil.copy(FX_BEFORE, root / "graphs" / "g0" / "000-aot.json")
    shutil.copy(FX_AFTER, root / "graphs" / "g0" / "001-fx-final.json")
    (root / "index.json").write_text(json.dumps(index if index is not None else _index()))
    return root


def _open_error(root: Path) -> LedgerError:
    with pytest.raises(LedgerError) as info:
        Ledger.open(root)
    assert info.value.file == str(root / "index.json")
    return info.value


def _stage(index: dict[str, Any], k: int = 1) -> dict[str, Any]:
    return index["graphs"][0]["stages"][k]


@pytest.mark.parametrize(("edit", "words"), [
    (lambda ix: _stage(ix).update(nodes="10"), ["graph g0, stage 1 (fx-final)", "'nodes'", "a string",
                                                  "expected an integer"]),
    (lambda ix: _stage(ix).update(file=7), ["graph g0, stage 1 (fx-final)", "'file'", "expected a string"]),
    (lambda ix: _stage(ix).pop("file"), ["graph g0, stage 1 (fx-final) has no 'file'"]),
    (lambda ix: _stage(ix).update(changed="yes"), ["'changed'", "expected a boolean"]),
    (lambda ix: _stage(ix).update(index=True), ["'index'", "expected an integer"]),
    (lambda ix: ix["graphs"][0].update(stages={"0": {}}), ["graph g0: 'stages' is an object, expected a list"]),
    (lambda ix: ix["graphs"][0].pop("id"), ["graph 0 has no 'id'"]),
    (lambda ix: ix["graphs"].append("g1"), ["graph 1 is a string, expected an object"]),
    (lambda ix: ix["graphs"][0]["stages"].append(None), ["graph g0, stage 2 is null, expected an object"]),
    (lambda ix: ix.update(timings=[1.0]), ["'timings' is a list, expected an object"]),
    (lambda ix: ix.update(dumps=[{"type": "pbtxt"}]), ["dump 0 has no 'file'"]),
])
def test_wrong_types_name_index_json_the_graph_and_the_stage(tmp_path: Path, edit: Any, words: list[str]) -> None:
    index = _index()
    edit(index)
    error = _open_error(_ledger(tmp_path / "run", index))
    assert error.message.startswith("malformed index.json: ")
    for word in words:
        assert word in error.message


@pytest.mark.parametrize("data", [{"status": "ok"}, {"graphs": {"g0": []}}, [1, 2], "text"])
def test_missing_graphs_list(tmp_path: Path, data: Any) -> None:
    root = tmp_path / "run"
    root.mkdir()
    (root / "index.json").write_text(json.dumps(data))
    error = _open_error(root)
    assert "index.json" in error.message and ("'graphs'" in error.message or "not a JSON object" in error.message)


def test_corrupt_and_missing_index(tmp_path: Path) -> None:
    root = _ledger(tmp_path / "run")
    (root / "index.json").write_text('{"graphs": [\n\n  oops]}')
    error = _open_error(root)
    assert error.message.startswith("corrupt index.json") and error.line == 3
    (root / "index.json").unlink()
    with pytest.raises(LedgerError, match="not a ledger"):
        Ledger.open(root)


@pytest.mark.parametrize("file", ["../../outside.json", "/etc/hostname", "graphs/../../outside.json"])
def test_stage_file_outside_the_ledger_is_refused(tmp_path: Path, file: str) -> None:
    index = _index()
    _stage(index)["file"] = file
    led = Ledger.open(_ledger(tmp_path / "run", index))
    with pytest.raises(LedgerError, match="outside the ledger") as info:
        led.load(led.find_stage("fx-final"))
    assert "fx-final" in info.value.message
    assert len(led.load(led.find_stage("aot-inference"))) > 0  # the other stages still load


def test_stage_file_that_links_out_of_the_ledger_is_refused(tmp_path: Path) -> None:
    root = _ledger(tmp_path / "run")
    secret = tmp_path / "secret.json"
    shutil.copy(FX_AFTER, secret)
    link = root / "graphs" / "g0" / "001-fx-final.json"
    link.unlink()
    os.symlink(secret, link)
    led = Ledger.open(root)
    with pytest.raises(LedgerError, match="outside the ledger"):
        led.load(led.find_stage("fx-final"))
    # a linked folder on the way out counts too
    shutil.rmtree(root / "graphs")
    (tmp_path / "elsewhere" / "g0").mkdir(parents=True)
    shutil.copy(FX_BEFORE, tmp_path / "elsewhere" / "g0" / "000-aot.json")
    os.symlink(tmp_path / "elsewhere", root / "graphs")
    with pytest.raises(LedgerError, match="outside the ledger"):
        led.load(led.find_stage("aot-inference"))


def test_a_link_inside_the_ledger_is_fine(tmp_path: Path) -> None:
    root = _ledger(tmp_path / "run")
    link = root / "graphs" / "g0" / "001-fx-final.json"
    link.unlink()
    os.symlink(root / "graphs" / "g0" / "000-aot.json", link)
    led = Ledger.open(root)
    assert len(led.load(led.find_stage("fx-final"))) == len(led.load(led.find_stage("aot-inference")))


@pytest.mark.parametrize("command", ["dump", "diff", "check"])
def test_commands_report_a_malformed_index_without_a_traceback(tmp_path: Path, command: str,
                                                              capsys: pytest.CaptureFixture) -> None:
    index = _index()
    _stage(index)["nodes"] = "ten"
    root = _ledger(tmp_path / "run", index)
    with pytest.raises(SystemExit) as e:
        run([command, str(root)])
    err = capsys.readouterr().err.replace("\n", "")
    assert e.value.code == 2 and "Traceback" not in err
    assert f"{root / 'index.json'}: error: malformed index.json: graph g0, stage 1 (fx-final)" in err


def test_report_marks_a_stage_outside_the_ledger_missing(tmp_path: Path) -> None:
    from airctl.report.ledger_data import ledger_payload

    index = _index()
    _stage(index)["file"] = "../../outside.json"
    shutil.copy(FX_AFTER, tmp_path / "outside.json")
    payload = ledger_payload(Ledger.open(_ledger(tmp_path / "run", index)))
    stages = payload["graphs"][0]["stages"]
    assert stages[1]["missing"] is True and not stages[0].get("missing")

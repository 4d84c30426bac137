"""Files in a user's or a profiler's folder that are not what they claim: a FIFO under a file's name
(no read may block: SQLite's open even outlived Ctrl-C), JSON nested past the interpreter's depth, a
ledger's index naming a file outside the ledger, a TEXT cell where the profiler writes numbers. Each
ends in an error naming the file, or is passed over; none hangs or ends in a traceback. The FIFO cases
run in a child with a time limit, so a regression fails the test instead of hanging the suite."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.faults.bounded import python_capped

NPU_DB = REPO / "fixtures" / "profiles" / "npu_db"


def _child(code: str, cwd: Path) -> str:
    ended = python_capped(textwrap.dedent(code), cwd=cwd, timeout=60)
    assert not ended.timed_out, "blocked on the FIFO"
    assert ended.returncode == 0, ended.text[-2000:]
    return ended.stdout


def test_a_fifo_beside_the_model_script_leaves_the_incremental_key_readable(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text("x = 1\n")
    os.mkfifo(tmp_path / "other.py")
    out = _child("""
        from pathlib import Path
        from airctl.pipeline.incremental.key import _siblings
        print(_siblings(Path("model.py").resolve()))
    """, tmp_path)
    assert len(out.strip()) == 64  # a digest: the FIFO counted by its name


def test_a_fifo_named_as_a_profiler_db_is_passed_over(tmp_path: Path) -> None:
    shutil.copytree(NPU_DB, tmp_path / "prof")
    out = next((tmp_path / "prof").glob("*/ASCEND_PROFILER_OUTPUT"))
    os.mkfifo(out / "ascend_pytorch_profiler_1.db")
    printed = _child(f"""
        from airctl.profile.ascend.db import _connect
        from airctl.profile.ascend.model import ProfileReadError
        try:
            _connect(__import__("pathlib").Path({str(out / "ascend_pytorch_profiler_1.db")!r}))
        except ProfileReadError as e:
            print("refused:", e)
    """, tmp_path)
    assert "refused:" in printed and "not a regular file (a FIFO)" in printed


@pytest.mark.parametrize("name", ["g.pbtxt", "g.json", "g.py"])
def test_a_fifo_given_as_a_graph_is_refused_at_once(tmp_path: Path, name: str) -> None:
    os.mkfifo(tmp_path / name)
    printed = _child(f"""
        from airctl.errors import GraphReadError
        from airctl.io.read import read_graph
        from airctl.io.source import is_model_script
        print("model script:", is_model_script({name!r}))
        try:
            read_graph({name!r})
        except GraphReadError as e:
            print("refused:", e)
    """, tmp_path)
    assert "model script: False" in printed and "refused:" in printed and "FIFO" in printed


def test_json_nested_past_the_interpreters_depth_is_an_error_naming_the_file(tmp_path: Path) -> None:
    from airctl.errors import LedgerError
    from airctl.ledger.collectives import read_log
    from airctl.safe_files import read_json

    deep = tmp_path / "trace.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(LedgerError, match="unreadable trace") as caught:
        read_json(deep, 1 << 20, "trace", too_large="", unreadable="")
    assert caught.value.file == str(deep)
    log = tmp_path / "collectives.jsonl"
    log.write_text("[" * 100_000 + "\n" + json.dumps({"ev": "graph", "graph": "g", "phase": "start"}) + "\n")
    assert read_log(log).events == 1  # the nested line passed over as a torn one is


def test_an_index_naming_a_text_outside_the_ledger_is_refused_by_export(tmp_path: Path) -> None:
    from airctl.errors import AirctlError
    from airctl.ledger.reader import Ledger
    from airctl.pipeline.export import _stage_payload
    from tests.cli.test_dump import make_ledger

    secret = tmp_path / "secret.txt"
    secret.write_text("not the ledger's")
    root = make_ledger(tmp_path / "run")
    index = json.loads((root / "index.json").read_text())
    stage = next(s for g in index["graphs"] for s in g["stages"] if s.get("dialect", "fx") == "fx")
    stage["text"] = str(secret)
    (root / "index.json").write_text(json.dumps(index))
    ledger = Ledger.open(root)
    ref = next(s for gid in ledger.graph_ids() for s in ledger.stages(gid) if s.name == stage["name"])
    with pytest.raises(AirctlError, match="outside|absolute"):
        _stage_payload(ledger, ref)


def test_a_text_cell_in_the_step_table_is_an_error_naming_the_database(tmp_path: Path) -> None:
    from airctl.profile.ascend.db import read_analysis_db
    from airctl.profile.ascend.model import Issues, ProfileReadError

    shutil.copytree(NPU_DB, tmp_path / "prof")
    db = next((tmp_path / "prof").glob("*/ASCEND_PROFILER_OUTPUT/analysis.db"))
    with sqlite3.connect(db) as con:
        con.execute("UPDATE StepTraceTime SET computing = 'abc'")
    with pytest.raises(ProfileReadError, match="no number") as caught:
        read_analysis_db(db, Issues())
    assert caught.value.file == str(db)


def test_a_profiler_table_over_its_limit_is_refused_from_its_size(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from airctl.profile.ascend import table
    from airctl.profile.ascend.model import Issues, ProfileReadError

    csv = tmp_path / "kernel_details.csv"
    csv.write_text("Name,Start Time(us),Duration(us)\n" + "mm,1,2\n" * 100)
    assert len(table.read_table(csv, Issues()).rows) == 100
    monkeypatch.setattr(table, "PROFILE_TABLE_BYTES", 512)
    with pytest.raises(ProfileReadError, match="too large for a profiler table") as caught:
        table.read_table(csv, Issues())
    assert caught.value.file == str(csv)


def test_a_model_script_swapped_for_a_fifo_after_its_check_is_refused_not_read(tmp_path: Path) -> None:
    """The script is checked (a regular file within the limit), then read from the descriptor the check
    opened: Python never opens the path again, so a FIFO put in its place in between blocks nothing."""
    (tmp_path / "model.py").write_text("x = 1\n")
    printed = _child("""
        import os
        from pathlib import Path
        from airctl.errors import ModelScriptError
        from airctl.pipeline.run import model_script

        checked = model_script.check_script

        def check_then_swap(path):
            checked(path)
            os.replace(path, "checked.py")
            os.mkfifo(path)

        model_script.check_script = check_then_swap
        try:
            model_script.import_script(Path("model.py"))
        except ModelScriptError as e:
            print("refused:", e)
    """, tmp_path)
    assert "refused:" in printed and "FIFO" in printed


def test_a_model_script_runs_the_bytes_it_was_checked_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from airctl.pipeline.run import model_script

    script = tmp_path / "model.py"
    script.write_text("x = 1\n")
    read = model_script.read_regular

    def read_then_swap(path, *args, **kwargs):
        data = read(path, *args, **kwargs)
        Path(path).write_text("x = 2\n")  # after the read, before Python would open it again
        return data

    monkeypatch.setattr(model_script, "read_regular", read_then_swap)
    module = model_script.import_script(script)
    assert module.x == 1 and not (tmp_path / "__pycache__").exists()

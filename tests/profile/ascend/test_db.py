"""airctl/profile/ascend/db.py: the .db export, read-only, and broken ones refused cleanly."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from airctl.profile.analyze import analyze
from airctl.profile.ascend.db import read_analysis_db, read_db
from airctl.profile.ascend.model import Issues, ProfileReadError


def _db(rank: Path) -> Path:
    return rank / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"


def test_tasks_streams_and_steps(folder: Callable[..., Path]) -> None:
    tasks, steps, cols = read_db(_db(folder("npu_db")), Issues())
    comm = [t for t in tasks if t.comm]
    assert len(comm) == 6 and {t.stream for t in comm} == {"8"} and {t.type for t in comm} == {"hcom_allReduce_"}
    assert {t.step for t in tasks} == set(steps) == {3, 4, 5}
    assert {t.type for t in tasks if t.is_marker} == {"EVENT_RECORD", "EVENT_WAIT"}
    assert cols.missing == [] and "PYTORCH_API" in cols.ignored


def test_times_stored_as_text_are_converted(folder: Callable[..., Path]) -> None:
    rank = folder("npu_db")
    before = {(t.name, t.start_ns, t.dur_ns) for t in read_db(_db(rank), Issues())[0]}
    with sqlite3.connect(_db(rank)) as con:
        con.execute("UPDATE TASK SET startNs = CAST(startNs AS TEXT), endNs = CAST(endNs AS TEXT)")
    assert {(t.name, t.start_ns, t.dur_ns) for t in read_db(_db(rank), Issues())[0]} == before


def test_analysis_db_step_trace_time(folder: Callable[..., Path]) -> None:
    rows = read_analysis_db(folder("npu_db") / "ASCEND_PROFILER_OUTPUT" / "analysis.db", Issues())
    assert [r.step for r in rows] == [3, 4, 5] and rows[0].values["Overlapped"] > 0


def test_not_a_database(folder: Callable[..., Path]) -> None:
    rank = folder("npu_db")
    _db(rank).write_bytes(b"SQLite format 2\x00" + b"\x01" * 200)
    with pytest.raises(ProfileReadError, match="not a readable SQLite database") as info:
        analyze(rank)
    assert info.value.file.endswith(".db")


def test_missing_tables_are_named(folder: Callable[..., Path]) -> None:
    rank = folder("npu_db")
    with sqlite3.connect(_db(rank)) as con:
        con.execute("DROP TABLE COMPUTE_TASK_INFO")
    with pytest.raises(ProfileReadError, match="lacks the table.*COMPUTE_TASK_INFO"):
        analyze(rank)

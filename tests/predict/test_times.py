"""TIMES tables: the CSV's forms, its errors (file and line, exit 2) and how tasks find rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.errors import ExitCode
from airctl.predict.plan import KERNEL, ReplayPlan, Task
from airctl.predict.times import TimesError, read_times_csv


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "t.csv"
    p.write_text(text, encoding="utf-8")
    return p


def plan() -> ReplayPlan:
    return ReplayPlan("g", "max-autotune", "ge", [
        Task(0, "MatMul", "MatMul", "default", KERNEL, aliases=("mm",)),
        Task(1, "Abs", "Abs", "default", KERNEL, aliases=("abs_1",)),
        Task(2, "add", "aten.add.Tensor", "default", KERNEL),
    ])


def test_node_rows_match_by_name_and_a_ge_op_by_its_fx_node(tmp_path: Path) -> None:
    table = read_times_csv(write(tmp_path, "# measured\nnode,us,cores\nmm,12.5,20\nAbs,3\n"))
    got = table.resolve(plan())
    assert got.durations_us == [12.5, 3.0, 0.0]
    assert got.cores == [20.0, None, None]
    assert got.unmatched == ["add"]


def test_op_rows_match_every_node_of_the_op_with_or_without_overload(tmp_path: Path) -> None:
    table = read_times_csv(write(tmp_path, "op,us\naten.add,4\nMatMul,9\n*,1\n"))
    assert table.resolve(plan()).durations_us == [9.0, 1.0, 4.0]
    assert table.resolve(plan()).unmatched == []


@pytest.mark.parametrize(("text", "line", "words"), [
    ("name,time\nmm,1\n", 1, "unexpected header"),
    ("node,us\nmm,-1\n", 2, "at least 0"),
    ("node,us\nmm,fast\n", 2, "not a number"),
    ("node,us\nmm,nan\n", 2, "finite"),
    ("node,us\nmm,1,2\n", 2, "expected 2 columns"),
    ("node,us,cores\nmm,1,0\n", 2, "above 0"),
    ("node,us\nmm,1\nmm,2\n", 3, "given twice"),
    ("node,us\n", None, "no rows"),
    ("\n# nothing\n", None, "empty"),
])
def test_a_bad_table_names_the_file_and_line_and_exits_2(tmp_path: Path, text: str, line: int | None,
                                                          words: str) -> None:
    with pytest.raises(TimesError, match=words) as e:
        read_times_csv(write(tmp_path, text))
    assert e.value.file and e.value.file.endswith("t.csv") and e.value.line == line
    assert e.value.exit_code == ExitCode.USAGE


def test_a_header_of_a_million_columns_gets_a_short_message(tmp_path: Path) -> None:
    with pytest.raises(TimesError) as e:
        read_times_csv(write(tmp_path, ",".join(["c"] * 1_000_000) + "\n"))
    assert len(str(e.value)) < 300


def test_a_fifo_or_folder_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "f.csv"
    os.mkfifo(fifo)
    with pytest.raises(TimesError, match="not a regular file"):
        read_times_csv(fifo)
    folder = tmp_path / "times.csv"
    folder.mkdir()
    with pytest.raises(TimesError, match="not a regular file"):
        read_times_csv(folder)

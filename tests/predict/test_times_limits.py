"""TIMES tables at their limits (issue 63.5, 63.6): huge finite times, long lines, a mistyped keyword.

A time of 1.7e308 µs is finite but overflowed later (exit 70); times are now bounded (an hour) and
refused with file and line, exit 2. The memory of a table near the 64 MB limit is measured by
bench/bench_times_table.py in a fresh process (docs/reliability.md); here the reader's behaviour.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.errors import ExitCode
from airctl.predict.times import MAX_LINE, MAX_US, TimesError, read_times_csv
from tests.conftest import REPO

PROFILES = REPO / "fixtures" / "profiles"


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "t.csv"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("value", ["1.7e308", "3.7e9", "1e300"])
def test_a_finite_time_above_the_maximum_is_refused_with_its_line(tmp_path: Path, value: str) -> None:
    with pytest.raises(TimesError) as e:
        read_times_csv(write(tmp_path, f"node,us\nmm,1\nabs,{value}\n"))
    assert e.value.line == 3 and "at most" in str(e.value) and e.value.exit_code == ExitCode.USAGE


def test_the_maximum_itself_is_a_time(tmp_path: Path) -> None:
    assert read_times_csv(write(tmp_path, f"node,us\nmm,{MAX_US:g}\n")).rows["mm"].us == MAX_US


def test_cores_are_bounded_too(tmp_path: Path) -> None:
    with pytest.raises(TimesError, match="cores must be"):
        read_times_csv(write(tmp_path, "node,us,cores\nmm,1,1e300\n"))


def test_profile_times_with_a_huge_time_exits_2_not_70(tmp_path: Path) -> None:
    from airctl.cli.app import build_app

    bad = write(tmp_path, "node,us\nMatMul,1.7e308\n*,1.7e308\n")
    r = CliRunner().invoke(build_app(), ["profile", str(PROFILES / "npu_two_streams"), "--times", str(bad),
                                         "--out", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert "t.csv:2" in r.output


def test_a_line_longer_than_the_limit_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    with pytest.raises(TimesError, match="line too long") as e:
        read_times_csv(write(tmp_path, "node,us\n" + "x" * (50 * MAX_LINE) + ",1\n"))
    assert e.value.line == 2


def test_a_mistyped_keyword_says_it_is_not_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TimesError) as e:
        read_times_csv(Path("estimat"))
    assert "no such file, and not a TIMES keyword (estimate)" in str(e.value)
    assert "--times estimate" in (e.value.hint or "")


def test_a_missing_csv_is_just_missing(tmp_path: Path) -> None:
    with pytest.raises(TimesError) as e:
        read_times_csv(tmp_path / "times.csv")
    assert str(e.value).endswith("no such file") and "keyword" not in str(e.value)


def test_quoted_names_and_a_bom_still_read(tmp_path: Path) -> None:
    p = tmp_path / "q.csv"
    p.write_bytes('\ufeffop,us\n"aten.add, odd",2\nMatMul,9\n'.encode())
    table = read_times_csv(p)
    assert table.op_rows["aten.add, odd"].us == 2.0 and table.op_rows["MatMul"].us == 9.0

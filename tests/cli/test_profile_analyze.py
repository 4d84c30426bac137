"""``airctl profile analyze`` as a user types it: several ranks, the step table, and hostile folders
(each a warning naming file:line with exit 0, or an error with exit 2 — never a traceback)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "fixtures" / "profiles"
runner = CliRunner()


def analyze(*args: object):  # noqa: ANN201
    return runner.invoke(build_app(), ["profile", "analyze", *map(str, args)])


def test_two_ranks_table(tmp_path: Path) -> None:
    r = analyze(PROFILES / "npu_two_ranks", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert "rank 0" in r.stdout and "rank 1" in r.stdout and "across ranks" in r.stdout
    assert "last to arrive at collectives: 1" in r.stdout and "a process per rank" in r.stdout
    assert "8 (communication)" in r.stdout and "steps (as step_trace_time.csv defines them)" in r.stdout
    assert (tmp_path / "analyze-npu_two_ranks" / "profile" / "trace.json").is_file()


def test_two_ranks_json(tmp_path: Path) -> None:
    r = analyze(PROFILES / "npu_two_ranks", "--out", tmp_path, "--json")
    data = json.loads(r.stdout)
    assert [x["rank"] for x in data["ranks"]] == [0, 1] and data["cross_rank"]["late_rank"] == 1
    summary = json.loads((tmp_path / "analyze-npu_two_ranks" / "profile" / "summary.json").read_text())
    assert summary["ranks"][1]["streams"] == data["ranks"][1]["streams"]


def test_level0_says_where_its_streams_came_from(tmp_path: Path) -> None:
    r = analyze(PROFILES / "npu_level0", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert "streams: compute: trace_view.json Ascend Hardware lanes" in r.stdout


def test_same_named_folders_do_not_overwrite_each_other(tmp_path: Path) -> None:
    name = next((PROFILES / "npu_level1").iterdir()).name
    for src, where in (("npu_level1", "a"), ("npu_level0", "b")):
        shutil.copytree(PROFILES / src / name, tmp_path / where / name)
    out = tmp_path / "out"
    for where in ("a", "b", "a"):
        assert analyze(tmp_path / where / name, "--out", out).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == [f"analyze-{name}", f"analyze-{name}-2"]
    assert (out / f"analyze-{name}" / "source.txt").read_text().strip() == str((tmp_path / "a" / name).resolve())


def _csv(rank: Path) -> Path:
    return rank / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"


def _edit_row(line: int, old: str, new: str) -> Callable[[Path], None]:
    def edit(rank: Path) -> None:
        lines = _csv(rank).read_bytes().split(b"\r\n")
        lines[line - 1] = lines[line - 1].replace(old.encode("latin-1"), new.encode("latin-1"), 1)
        _csv(rank).write_bytes(b"\r\n".join(lines))
    return edit


def _duration(line: int, value: str) -> Callable[[Path], None]:
    """Set the Duration(us) cell (the one after the TAB-ended start time) of one line."""
    def edit(rank: Path) -> None:
        lines = _csv(rank).read_bytes().decode("utf-8").split("\r\n")
        lines[line - 1] = re.sub(r'(\t",)[^,]*', lambda m: m.group(1) + value, lines[line - 1], count=1)
        _csv(rank).write_bytes("\r\n".join(lines).encode("utf-8"))
    return edit


def _header_only(rank: Path) -> None:
    _csv(rank).write_bytes(_csv(rank).read_bytes().split(b"\r\n")[0] + b"\r\n")


def _deep_trace(rank: Path) -> None:
    (rank / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text("[" * 50_000 + "]" * 50_000)


@pytest.mark.parametrize("damage, code, expect", [
    (_edit_row(5, "aclnn", "acln\xe9"), 0, "kernel_details.csv:5: bytes that are not UTF-8"),
    (_duration(7, "-50.25"), 0, "kernel_details.csv:7: row left out: duration -50.25 µs is negative"),
    (_edit_row(8, '"17364', '"99999999'), 0, "kernel_details.csv:8: row left out: start"),
    (_duration(9, "nan"), 0, "kernel_details.csv:9: row left out: its time is NaN"),
    (_duration(10, "1e30"), 0, "kernel_details.csv:10: row left out: duration"),
    (_header_only, 0, "kernel_details.csv:1: has a header and no rows"),
    (_deep_trace, 2, "trace_view.json: error: trace_view.json is nested too deeply"),
])
def test_hostile_folders(tmp_path: Path, damage: Callable[[Path], None], code: int, expect: str) -> None:
    rank = tmp_path / "p" / next((PROFILES / "npu_level1").iterdir()).name
    shutil.copytree(next((PROFILES / "npu_level1").iterdir()), rank)
    damage(rank)
    r = analyze(rank, "--out", tmp_path / "out")
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output and expect in r.stderr


def test_a_plain_file_as_dir(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    r = analyze(tmp_path / "notes.txt", "--out", tmp_path)
    assert r.exit_code == 2 and "notes.txt is a file, not a profiler folder" in r.stderr

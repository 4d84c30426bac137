"""torch_npu's memory files: the real folders' peaks, and bad files named with their line.

The expected figures were computed by hand from each file with a one-off script (csv module and
Decimal, independent of the reader): the highest ``Total Allocated(MB)`` / ``Total Reserved(MB)``
per component × 2^20, ``Size(KB)`` × 2^10, rows counted from line 2.
"""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import pytest

from airctl.errors import ExitCode
from airctl.profile.ascend.memory_files import (
    MODULES,
    OPERATORS,
    RECORD,
    find_memory_files,
    read_memory,
    read_memory_record,
)
from airctl.profile.ascend.model import Issues, ProfileReadError

REAL = Path(__file__).resolve().parents[3] / "fixtures" / "profiles" / "real"

# folder: (PTA+GE allocated peak, its line, PTA allocated peak, PTA+GE reserved peak, GE allocated peak,
#          operator blocks, never released, largest block, HCCL's reserved)
MEASURED = {
    "cnn_ddp_level0/rank0_ascend_pt": (1245819904, 918, 1245688832, 1600913408, 76611584, 184, 24,
                                       ("aten::mm", 150995456, 67), 423690240),
    "cnn_ddp_level1/rank0_ascend_pt": (1322299392, 905, 1245688832, 1600913408, 76611584, 184, 24,
                                       ("aten::mm", 150995456, 67), 423690240),
    "cnn_ddp_level2/rank0_ascend_pt": (1322299392, 904, 1245688832, 1600913408, 76611584, 184, 24,
                                       ("aten::mm", 150995456, 67), 423690240),
    "llm_two_streams_level1/test_rank_0": (4823308800, 9, 4823308800, 9084862464, 262144, 28, 0,
                                           ("cann::Graph_95", 83951616, 5), 855764992),
    "qwen3_pp2_dp2_level2/rank_0_ascend_pt": (10782243840, 5908, 10782243840, 10875830272, None, 3103, 1,
                                              ("aten::embedding_dense_backward", 655937536, 1977), 1302016000),
}


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_real_folders_peaks(name: str) -> None:
    total, line, pta, reserved, ge, blocks, held, largest, hccl = MEASURED[name]
    m = read_memory(REAL / name)
    assert m is not None and m.peak_from == "PTA+GE"
    assert (m.peak_allocated_bytes, m.components["PTA+GE"].allocated.line) == (total, line)  # type: ignore[union-attr]
    assert m.components["PTA"].allocated.bytes == pta  # type: ignore[union-attr]
    assert m.peak_reserved_bytes == reserved
    assert (m.components["GE"].allocated.bytes if "GE" in m.components else None) == ge  # type: ignore[union-attr]
    assert m.components["APP"].allocated is None  # APP rows carry reserved only
    assert (m.operator_blocks, m.unreleased_blocks) == (blocks, held)
    assert (m.top_operators[0].name, m.top_operators[0].bytes, m.top_operators[0].line) == largest
    assert [b.bytes for b in m.top_operators] == sorted((b.bytes for b in m.top_operators), reverse=True)
    assert m.modules["HCCL"] == hccl
    assert m.to_json()["peak_allocated_bytes"] == total


def test_the_peak_time_is_read_exactly_with_its_trailing_tab() -> None:
    m = read_memory(REAL / "cnn_ddp_level0/rank0_ascend_pt")
    assert m is not None and m.peak_at_us == 1736405443921184.28  # "1736405443921184.280\t" on line 918


def test_a_module_file_of_another_capture_is_flagged() -> None:
    m = read_memory(REAL / "llm_two_streams_level1/test_rank_0")  # npu_module_mem.csv is from 2024, the rest 2023
    assert m is not None and any("another capture" in w for w in m.warnings)


def test_a_folder_without_memory_files() -> None:
    assert read_memory(REAL / "cnn_ddp_db_level1/rank0_ascend_pt") is None  # a .db export


def copy(tmp_path: Path, name: str = "cnn_ddp_level0/rank0_ascend_pt") -> Path:
    dst = tmp_path / "rank"
    shutil.copytree(REAL / name / "ASCEND_PROFILER_OUTPUT", dst / "ASCEND_PROFILER_OUTPUT",
                    ignore=lambda d, names: [n for n in names if n not in (RECORD, OPERATORS, MODULES)])
    return dst


def error(folder: Path) -> ProfileReadError:
    with pytest.raises(ProfileReadError) as e:
        read_memory(folder)
    assert e.value.exit_code == ExitCode.USAGE == 2
    return e.value


def test_a_file_cut_short_names_its_last_line(tmp_path: Path) -> None:
    folder = copy(tmp_path)
    path = find_memory_files(folder)[RECORD]
    data = path.read_bytes()
    path.write_bytes(data[:data.index(b"\n", 5000) + 20])  # 20 bytes into a row
    e = error(folder)
    assert e.file == str(path) and e.line == data[:5000].count(b"\n") + 2 and "cut short" in e.message


@pytest.mark.parametrize(("which", "edit", "line", "words"), [
    (RECORD, lambda t: t.replace("935.9951171875", "9x5.99", 1), None, "Total Allocated(MB) '9x5.99' is not a size"),
    (RECORD, lambda t: t.replace("1736405443870824.880", "later", 1), 19, "Timestamp(us) 'later' is not a time"),
    (RECORD, lambda t: t.replace("Total Reserved(MB)", "Reserved", 1), 1, "lacks the column(s) Total Reserved(MB)"),
    (OPERATORS, lambda t: t.replace("18816.5,", "18816.5,1,", 1), 2, "a row of 16 cells under a header of 15"),
    (OPERATORS, lambda t: t.replace("18816.5", "-3", 1), 2, "Size(KB) '-3' is not a size"),
    (MODULES, lambda t: t.replace("0.0,NPU:0", "nan,NPU:0", 1), 2, "Total Reserved(MB) 'nan' is not a size"),
    (MODULES, lambda t: t.replace("SLOG", "SL\x00G", 1), 2, "NUL"),
    (MODULES, lambda t: "", 0, "empty"),
])
def test_garbage_is_named_with_file_and_line(tmp_path: Path, which: str, edit, line: int | None,  # noqa: ANN001
                                             words: str) -> None:
    folder = copy(tmp_path)
    path = find_memory_files(folder)[which]
    text = path.read_text(encoding="utf-8")
    path.write_text(edit(text), encoding="utf-8", newline="")
    e = error(folder)
    assert e.file == str(path) and words in e.message
    if line is None:  # the first PTA row
        line = next(i for i, row in enumerate(text.splitlines(), start=1) if row.startswith("PTA,"))
    assert e.line == line


def test_binary_garbage(tmp_path: Path) -> None:
    folder = tmp_path / "ASCEND_PROFILER_OUTPUT"
    folder.mkdir()
    (folder / RECORD).write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    e = error(tmp_path)
    assert e.file == str(folder / RECORD) and e.line is not None


def test_huge_files_are_streamed(tmp_path: Path) -> None:
    path = tmp_path / RECORD
    rows = 60_000
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,"
                "Device Type\r\n")
        for i in range(rows):
            f.write(f"PTA,{1736405443870818 + i}.960\t,{i % 977}.5,2048.0,{i % 977}.5,1431569360,NPU:0\r\n")
    tracemalloc.start()
    try:
        comps = read_memory_record(path, Issues())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert path.stat().st_size > 3_500_000 and peak < 500_000  # the file is never held
    pta = comps["PTA"]
    assert pta.rows == rows and pta.allocated is not None and pta.allocated.bytes == int(976.5 * (1 << 20))
    assert pta.allocated.line == 2 + 976


def test_a_spreadsheet_resave_in_utf16_and_stray_bytes(tmp_path: Path) -> None:
    header = "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Device Type\r\n"
    path = tmp_path / RECORD
    path.write_bytes((header + "PTA,1695115378714622.8,2.5,8.0,NPU:0\r\n").encode("utf-16"))
    assert read_memory_record(path, Issues())["PTA"].allocated.bytes == 5 * (1 << 19)  # type: ignore[union-attr]
    path.write_bytes(header.encode() + b"PT\xff,1695115378714622.8,2.5,8.0,NPU:0\r\n")
    issues = Issues()
    assert "PT\ufffd" in read_memory_record(path, issues)
    assert issues.warnings and issues.warnings[0].startswith(f"{path}:2:")

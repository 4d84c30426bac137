"""airctl/profile/ascend/kernels.py + table.py: kernel_details.csv of every version and level, and
hostile ones (each either read right with a file:line warning, or refused with file:line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.profile.ascend.kernels import read_kernels
from airctl.profile.ascend.model import Issues, ProfileReadError

# headers as each torch_npu / CANN version writes them (docs/profile.md §Columns)
LEVEL0_V21 = "Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim"
LEVEL0_V213 = ("Step Id,Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),"
               "Block Num,Mix Block Num,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
               "Output Formats")
LEVEL1_2023 = ("Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),"
               "Wait Time(us),Block Dim,Mix Block Dim,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
               "Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles")
OP_SUMMARY = ("Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
              "Task Duration(us),Task Wait Time(us),Block Num")


def write(tmp_path: Path, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / "kernel_details.csv"
    path.write_bytes(text.replace("\n", "\r\n").encode(encoding))
    return path


def test_level0_v21_no_stream_no_step(tmp_path: Path) -> None:
    path = write(tmp_path, LEVEL0_V21 + "\nMatMul_1,N/A,AI_CORE,1699529622790614.812\t,607.98,0,48\n")
    issues = Issues()
    (t,), cols = read_kernels(path, issues)
    assert (t.name, t.type, t.stream, t.step, t.start_ns, t.dur_ns) == ("MatMul_1", "MatMul_1", None, None,
                                                                        1699529622790614812, 607980)
    assert cols.missing == ["Stream ID", "Step Id"] and cols.ignored == ["Wait Time(us)"]
    assert t.blocks == (48, 0)  # Block Dim read: the replay's core demand
    assert issues.warnings == []


def test_level0_v213_communication_row(tmp_path: Path) -> None:
    path = write(tmp_path, LEVEL0_V213 + '\n1,0,hcom_allReduce__868_0_1,N/A,COMMUNICATION,"1736413971560000.100\t",'
                                         '95.2,0,0,,,,,,,\n')
    (t,), _ = read_kernels(path, Issues())
    assert t.comm and t.stream is None and t.type == "hcom_allReduce_" and t.dur_ns == 95200


def test_level1_2023_hccl_core_and_shapes_in_quotes(tmp_path: Path) -> None:
    path = write(tmp_path, LEVEL1_2023 + '\n1,4294967295,1259,16,ZerosLike46,ZerosLike,AI_VECTOR_CORE,'
                 '1699529622790614.8,607.98,0,48,0,"""544404480""",FLOAT16,FORMAT_ND,"""544404480""",FLOAT16,'
                 'FORMAT_ND,N/A,0,0\n1,4294967295,N/A,N/A,hcom_broadcast__445_0,hcom_broadcast_,HCCL,'
                 '1699529622793969.5,308926.68,2746.77,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n')
    kernel, hccl = read_kernels(path, Issues())[0]
    assert (kernel.stream, kernel.step, kernel.comm) == ("16", 1, False)
    assert (hccl.stream, hccl.comm, hccl.type, hccl.dur_ns) == (None, True, "hcom_broadcast_", 308926680)


def test_cann_op_summary_columns(tmp_path: Path) -> None:
    path = write(tmp_path, OP_SUMMARY + "\n0,4294967295,61653,2,aclnnMatmul,MatMulV2,dynamic,AI_CORE,"
                                        "1736413971558972.912\t,185.504,1.087000,16\n")
    (t,), cols = read_kernels(path, Issues())
    assert (t.name, t.type, t.stream, t.core, t.dur_ns) == ("aclnnMatmul", "MatMulV2", "2", "AI_CORE", 185504)
    assert cols.missing == ["Step Id"]


def test_missing_required_column_is_an_error_on_line_1(tmp_path: Path) -> None:
    path = write(tmp_path, "Name,Start Time(us)\nx,1\n")
    with pytest.raises(ProfileReadError, match=r"lacks the column\(s\) Duration\(us\)") as info:
        read_kernels(path, Issues())
    assert info.value.line == 1 and info.value.file == str(path)


def rows(*lines: str) -> str:
    return LEVEL0_V213 + "\n" + "\n".join(lines) + "\n"


GOOD = "1,0,Add,Add,AI_VECTOR_CORE,1736413971558972.912\t,26.78,0,40,0,,,,,,"


def test_nan_negative_and_absurd_rows_are_left_out_with_their_line(tmp_path: Path) -> None:
    path = write(tmp_path, rows(GOOD, GOOD.replace("26.78", "nan"), GOOD.replace("26.78", "-50"),
                                GOOD.replace("1736413971558972.912", "1e30"), GOOD.replace("26.78", "N/A"), GOOD))
    issues = Issues()
    tasks, _ = read_kernels(path, issues)
    assert len(tasks) == 2 and all(t.dur_ns == 26780 for t in tasks)
    text = "\n".join(issues.finish())
    for line, why in ((3, "NaN"), (4, "negative"), (5, "not near the other rows"), (6, "missing")):
        assert f"kernel_details.csv:{line}: row left out" in text and why in text


def test_text_where_a_number_belongs_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, rows(GOOD, GOOD.replace("26.78", "soon")))
    with pytest.raises(ProfileReadError, match="not a number") as info:
        read_kernels(path, Issues())
    assert info.value.line == 3


def test_non_utf8_names_are_replaced_with_a_warning_and_times_kept(tmp_path: Path) -> None:
    path = tmp_path / "kernel_details.csv"
    path.write_bytes(rows(GOOD, GOOD.replace("Add,Add", "Add\xe9,Add")).replace("\n", "\r\n").encode("latin-1"))
    issues = Issues()
    tasks, _ = read_kernels(path, issues)
    assert [t.name for t in tasks] == ["Add", "Add\ufffd"] and tasks[1].dur_ns == 26780
    assert issues.warnings == [f"{path}:3: bytes that are not UTF-8 were replaced by U+FFFD (names may show �; "
                               "times are unaffected)"]


def test_utf16_and_bom(tmp_path: Path) -> None:
    for encoding in ("utf-16", "utf-8-sig"):
        tasks, cols = read_kernels(write(tmp_path, rows(GOOD), encoding), Issues())
        assert tasks[0].start_ns == 1736413971558972912 and "Step Id" in cols.read


def test_header_only_warns(tmp_path: Path) -> None:
    issues = Issues()
    assert read_kernels(write(tmp_path, LEVEL0_V213 + "\n"), issues)[0] == []
    assert "has a header and no rows" in issues.warnings[0]


def test_a_row_cut_short_is_left_out_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "kernel_details.csv"
    path.write_bytes(rows(GOOD, GOOD).replace("\n", "\r\n").encode() + b"1,0,A\x00dd,Add,AI_VEC")
    issues = Issues()
    assert len(read_kernels(path, issues)[0]) == 2
    assert issues.warnings == [f"{path}:4: 5 fields where the header has 16: the row is passed over"]


def test_a_row_short_of_a_field_in_the_middle_is_passed_over_not_read_shifted(tmp_path: Path) -> None:
    """A real profile's row with one field fewer than its header (fixtures/profiles/real/llm_two_streams_level1):
    read by position, its Wait Time became its Duration, and the op's mean time went from ~7 ms to 5.28 ms."""
    fields = GOOD.split(",")
    short = ",".join(fields[:3] + fields[4:])  # the fourth field gone: every later one a column early
    path = write(tmp_path, rows(GOOD, short, GOOD))
    issues = Issues()
    assert len(read_kernels(path, issues)[0]) == 2
    assert issues.warnings == [f"{path}:3: 15 fields where the header has 16: the row is passed over"]


def test_an_unreadable_csv_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, rows(GOOD, GOOD.replace("Add,Add", '"' + "x" * 200_000 + '",Add')))
    with pytest.raises(ProfileReadError, match="not a readable CSV file: field larger than field limit") as info:
        read_kernels(path, Issues())
    assert info.value.line == 3


def test_warnings_are_capped_per_kind(tmp_path: Path) -> None:
    path = write(tmp_path, rows(*[GOOD.replace("26.78", "nan")] * 12))
    issues = Issues()
    read_kernels(path, issues)
    out = issues.finish()
    assert len(out) == 6 and out[-1] == "… and 7 more like 'time is NaN or missing'"

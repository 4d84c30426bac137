"""Long lines in imported logs (issue 63.14): a log with one 200 MB line took 1,016 MB in ``airctl import``.

The readers (TorchAir's records, Dynamo's and TorchAir's why events) now take lines cut as they are
read (:func:`airctl.io.bounded_lines.bounded_lines`). Peak memory of the import itself is measured
in a fresh process by the slow test below (``ru_maxrss``), the readers' behaviour by the fast ones.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from airctl.io.bounded_lines import bounded_lines
from airctl.io.log_records import MAX_LINE, read_records
from tests.conftest import REPO

HEAD = "[DEBUG] TORCHAIR(7,python):2026-11-23 14:33:55.000.000 [x.py:1]7 "


def test_a_line_past_the_limit_is_cut_and_the_next_line_read_whole() -> None:
    raw = io.BytesIO(b"a" * 100 + b"\r\n" + b"next\n" + b"last")
    assert list(bounded_lines(raw, 10)) == ["a" * 10 + "\n", "next\n", "last"]


def test_an_overlong_last_line_without_newline_is_cut() -> None:
    assert list(bounded_lines(io.BytesIO(b"b" * 50), 8)) == ["b" * 8]


def test_a_cut_in_a_multibyte_character_is_replaced_not_an_error() -> None:
    assert list(bounded_lines(io.BytesIO("ééé\n".encode()), 3)) == ["é\ufffd\n"]


def test_records_around_a_huge_line_keep_their_line_numbers(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    with log.open("w") as f:
        f.write(HEAD + "first\n")
        f.write(HEAD + "x" * (MAX_LINE * 3) + "\n")
        f.write(HEAD + "third\n")
    records = list(read_records(log))
    assert [(r.line, len(r.message)) for r in records] == [(1, 5), (2, MAX_LINE - len(HEAD)), (3, 5)]


@pytest.mark.slow
def test_importing_a_log_with_a_200_mb_line_stays_bounded(tmp_path: Path) -> None:
    source = REPO / "fixtures" / "imports" / "ma_txt"
    folder = tmp_path / "big"
    (folder / "graph_dump").mkdir(parents=True)
    for dump in (source / "graph_dump").iterdir():
        (folder / "graph_dump" / dump.name).write_bytes(dump.read_bytes())
    lines = (source / "train.log").read_text().splitlines(keepends=True)
    with (folder / "train.log").open("w") as f:
        f.write(lines[0])
        chunk = "a" * (1 << 20)
        f.write(HEAD)
        for _ in range(200):
            f.write(chunk)
        f.write("\n")
        f.writelines(lines[1:])
    code = ("import resource, sys; from airctl.cli.main import run; "
            "sys.argv = ['airctl', 'import', sys.argv[1], '--out', sys.argv[2]]\n"
            "try:\n    run(sys.argv[1:])\nexcept SystemExit as e:\n    rc = e.code\n"
            "hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
            "print(rc, int(hwm) // 1024)")  # VmHWM: ru_maxrss survives exec and would carry the worker's size
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}  # a user's fresh process
    env.update(PYTHONPATH=str(REPO), AIRCTL_WARM="0", TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    done = subprocess.run([sys.executable, "-c", code, str(folder), str(tmp_path / "runs")], env=env,
                          capture_output=True, text=True, timeout=600)
    rc, peak_mb = done.stdout.split()[-2:]
    assert rc == "0", done.stderr[-2000:]
    assert int(peak_mb) < 500, peak_mb

"""A native crash's report in a ledger (crash.txt, written by faulthandler while the run is open):
what readers quote from it, whatever the file holds, and faulthandler given back as it was."""

from __future__ import annotations

import faulthandler
import os
from pathlib import Path

from airctl.ledger.liveness import CRASH_FILE, crash_report, seen_alive
from airctl.pipeline.run.crash_record import CrashRecord

ABORT = """Fatal Python error: Aborted

Thread 0x00007f0000000001 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "/venv/lib/python3.11/site-packages/airctl_writer.py", line 10 in _loop

Current thread 0x00007f0000000002 (most recent call first):
  File "/venv/lib/python3.11/site-packages/torch/_dynamo/convert_frame.py", line 1200 in __call__
  File "/home/me/model.py", line 31 in forward
  File "/home/me/model.py", line 40 in step

Extension modules: torch._C (total: 1)
"""


def test_the_crashing_threads_innermost_frame_and_the_users_own(tmp_path: Path) -> None:
    (tmp_path / CRASH_FILE).write_text(ABORT)
    dynamo = "/venv/lib/python3.11/site-packages/torch/_dynamo/convert_frame.py"
    assert crash_report(tmp_path) == {"error": "Aborted", "where": f"__call__ at {dynamo}:1200",
                                      "user_frame": "forward at /home/me/model.py:31", "file": CRASH_FILE}


def test_no_report_when_there_is_none_or_it_is_not_one(tmp_path: Path) -> None:
    assert crash_report(tmp_path) is None and crash_report(None) is None
    (tmp_path / CRASH_FILE).write_text("")  # faulthandler's file of a run that was killed otherwise
    assert crash_report(tmp_path) is None
    (tmp_path / CRASH_FILE).write_bytes(b"\xff\x00" * 10**6)
    assert crash_report(tmp_path) is None
    (tmp_path / CRASH_FILE).unlink()
    (tmp_path / CRASH_FILE).symlink_to("/etc/passwd")
    assert crash_report(tmp_path) is None
    (tmp_path / CRASH_FILE).unlink()
    os.mkfifo(tmp_path / CRASH_FILE)  # never blocks
    assert crash_report(tmp_path) is None


def test_a_crash_in_a_huge_report_is_still_read_and_bounded(tmp_path: Path) -> None:
    text = "Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n" + \
        '  File "/m.py", line 1 in f\n' + "x" * (64 * 2**20)
    (tmp_path / CRASH_FILE).write_text(text)
    assert crash_report(tmp_path)["where"] == "f at /m.py:1"


def test_a_died_run_with_a_report_says_it_crashed(tmp_path: Path) -> None:
    (tmp_path / CRASH_FILE).write_text(ABORT)
    index = {"status": "running", "process": {"pid": 2**22 + 1, "host": os.uname().nodename}, "graphs": []}
    seen = seen_alive(index, tmp_path)
    assert seen["status"] == "died" and seen["error_detail"]["type"] == "Crashed"
    assert "crashed before any stage was captured: Aborted in __call__ at " in seen["error"]
    assert "called from forward at /home/me/model.py:31" in seen["error"]
    assert seen_alive(index)["error_detail"]["type"] == "Died"  # no folder given: what it always said


def test_faulthandler_is_given_back_as_it_was(tmp_path: Path) -> None:
    was = faulthandler.is_enabled()
    try:
        for before in (False, True):
            faulthandler.enable() if before else faulthandler.disable()
            record = CrashRecord.start(tmp_path)
            assert faulthandler.is_enabled() and (tmp_path / CRASH_FILE).is_file()
            record.stop()
            assert faulthandler.is_enabled() is before
            assert not (tmp_path / CRASH_FILE).exists()  # nothing written: removed
    finally:
        faulthandler.enable() if was else faulthandler.disable()

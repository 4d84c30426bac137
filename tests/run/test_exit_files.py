"""The console script's end closes the files user code left open (their buffers flushed, as Python's
teardown would), and walks the heap to find them only when a regular file is open for writing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from airctl.pipeline.run.boundary import _writing_to_a_file, close_open_files
print(_writing_to_a_file())
kept = open(sys.argv[1], "w")
kept.write("written, never closed")
print(_writing_to_a_file())
close_open_files()
print(kept.closed)
reading = open(sys.argv[1])
print(_writing_to_a_file())
"""


def test_the_heap_is_walked_only_while_a_file_is_open_for_writing(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "kept.txt")], capture_output=True, text=True,
                         env={**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}, timeout=60, check=True)
    assert out.stdout.split() == ["False", "True", "True", "False"], out.stdout + out.stderr
    assert (tmp_path / "kept.txt").read_text() == "written, never closed"

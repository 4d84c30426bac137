"""What the sim tests run outside the test process: Python code in a process of its own (torch_npu's
stand-in registers the device process-wide and for good), and a script under ``airctl run`` forked
from the suite's warm process (tests/warm_process.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from tests.conftest import REPO
from tests.warm_process import WarmProcess, start

ENV = dict(os.environ, PYTHONPATH=str(REPO), TORCH_DEVICE_BACKEND_AUTOLOAD="0")


def python(code: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``code`` (dedented) in a fresh interpreter, output captured."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=240)


def airctl_run(warm_process: WarmProcess, tmp_path: Path, name: str, script_text: str) -> Any:
    """``airctl run --backend sim`` of ``script_text`` written to ``tmp_path/name``; asserts it exits 0."""
    script = tmp_path / name
    script.write_text(script_text, encoding="utf-8")
    res = start(warm_process, ["run", "--backend", "sim", "--out", tmp_path / "runs", script], tmp_path, ENV, tmp_path)
    assert res.wait(400) == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res

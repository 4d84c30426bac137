"""A command run in a fresh interpreter, and which modules it imported: the tests that keep commands off
``import torch`` (``airctl --help``, ``doctor``, ``diff``/``check`` of graph files) share it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PROBE = """
import sys, io, contextlib
from airctl.cli.main import run
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        run({argv!r})
    except SystemExit as e:
        code = e.code
print("IMPORTED=" + ",".join(m for m in {modules!r} if m in sys.modules))
print("EXIT=" + str(code))
print("OUT=" + buf.getvalue().replace(chr(10), " "))
"""


def probe(argv: list[str], *, modules: tuple[str, ...] = ("torch",), cwd: Path = REPO,
          env: dict[str, str] | None = None) -> dict[str, str]:
    """``IMPORTED`` (those of ``modules`` the command imported, comma-separated), ``EXIT`` and ``OUT``
    (its stdout on one line) of ``airctl ARGV`` run from ``cwd``."""
    proc = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv, modules=modules)], capture_output=True,
                          text=True, cwd=cwd, timeout=120, env=None if env is None else {**os.environ, **env})
    lines = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line[:12])
    assert "IMPORTED" in lines, proc.stderr
    return lines

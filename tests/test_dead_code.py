"""No dead names in airctl/: vulture at 60 % confidence, with the names it cannot see used listed, each
group with its reason, in tests/vulture_allow.py ([tool.vulture] in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def test_vulture_finds_no_dead_name() -> None:
    vulture = Path(sys.executable).with_name("vulture")
    if not vulture.exists() and shutil.which("vulture") is None:
        pytest.skip("vulture is not installed (pip install -e .[test])")
    proc = subprocess.run([str(vulture) if vulture.exists() else "vulture"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and not proc.stdout.strip(), (
        "dead names (delete them; a name used where vulture cannot see it goes into tests/vulture_allow.py, "
        "under its reason):\n" + proc.stdout + proc.stderr)

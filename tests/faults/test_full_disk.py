"""Acceptance 4 of issue 33, on a real full disk: a small tmpfs mounted in a private mount namespace
(``unshare -m``, root only; skipped elsewhere). A run that fails because the disk is full leaves no
temporary file in ``--out`` and is the current run (``latest`` names it, in place: the pointer already owns
its block); when not even its index fits, no half-made folder is left and ``latest`` keeps the last run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SCRIPT = Path(__file__).parent / "scripts" / "full_disk_import.py"
DUMP = REPO / "fixtures" / "checks" / "dumps" / "similar_stream_labels.txt"


def _on_a_full_disk(tmp_path: Path, slack: int) -> dict:
    mnt = tmp_path / "disk"
    mnt.mkdir()
    shell = (f"mount -t tmpfs -o size=4m tmpfs {mnt} && {sys.executable} {SCRIPT} {mnt} {DUMP} {slack}")
    env = {**os.environ, "PYTHONPATH": str(REPO), "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    proc = subprocess.run(["unshare", "-m", "sh", "-c", shell], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    if proc.returncode != 0 and ("unshare" in proc.stderr or "mount" in proc.stderr):
        pytest.skip(f"no private tmpfs here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


pytestmark = pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs root and unshare")


@pytest.mark.slow
@pytest.mark.parametrize("slack", [4096, 8192])
def test_a_run_failing_on_a_full_disk_is_current_and_leaves_no_temp(tmp_path: Path, slack: int) -> None:
    seen = _on_a_full_disk(tmp_path, slack)
    assert seen["c1"] == 0 and seen["c2"] == 2 and "cannot write the ledger" in seen["e2"], seen
    assert seen["tmps"] == [], seen
    assert seen["latest"] != seen["first"] and seen["statuses"][seen["latest"]] == "failed", seen
    assert "Traceback" not in seen["e2"]


@pytest.mark.slow
def test_a_disk_too_full_for_an_index_leaves_no_folder(tmp_path: Path) -> None:
    seen = _on_a_full_disk(tmp_path, 0)
    assert seen["c2"] == 2 and seen["tmps"] == [], seen
    assert seen["folders"] == [seen["first"]] and seen["latest"] == seen["first"], seen

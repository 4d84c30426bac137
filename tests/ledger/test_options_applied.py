"""``airctl show --options``: an option that changes nothing says so; one that does names its stage
(compiles: slow). Both against the run without ``--option`` in the same folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
COMPILE = ["compile", str(REPO / "fixtures/models/two_chains.py"), "--mode", "reduce-overhead",
           "--passes", str(REPO / "fixtures/passes/fuse/fuse_mm_add.yaml")]


def _airctl(*args: str, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "airctl", *args, "--out", str(out)], capture_output=True, text=True,
                          env={**os.environ, "AIRCTL_WARM": "0"})


def _options(out: Path, *option: str) -> dict:
    done = _airctl(*COMPILE, *[a for o in option for a in ("--option", o)], out=out)
    assert done.returncode == 0, done.stderr[-2000:]
    shown = _airctl("show", "--options", "--json", out=out)
    return json.loads(shown.stdout)


def test_an_option_that_changes_nothing_and_one_that_names_its_stage(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    assert _options(out)["rows"] == []  # the baseline: no option given
    # no input is mutated in place: the pass it switches off changed nothing
    (row,) = _options(out, "debug.aclgraph.disable_reinplace_input_mutated_ops_pass=True")["rows"]
    assert row["reached"] is True and row["stage"] is None and row["changed"].startswith("no stage changed")
    # the fused addmm stays out of place: the reinplacing pass is what changed
    (row,) = _options(out, "debug.aclgraph.disable_reinplace_inplaceable_ops_pass=True")["rows"]
    assert row["stage"] == "1-inference/after:reinplace_inplaceable_ops_pass (ran in the other run only)"

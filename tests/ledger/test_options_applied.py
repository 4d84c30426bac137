"""``airctl show --options``: an option that changes nothing says so; one that does names its stage
(compiles: slow). Both against the run without ``--option`` in the same folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
COMPILE = ["compile", str(REPO / "fixtures/models/two_chains.py"), "--mode", "reduce-overhead",
           "--passes", str(REPO / "fixtures/passes/fuse/fuse_mm_add.yaml")]


def _airctl(*args: str, out: Path):  # noqa: ANN202 - click's Result
    """The command in this process (a fresh process each would import torch and TorchAir again)."""
    return CliRunner().invoke(build_app(), [*args, "--out", str(out)])


def _options(out: Path, *option: str) -> dict:
    done = _airctl(*COMPILE, *[a for o in option for a in ("--option", o)], out=out)
    assert done.exit_code == 0, done.output[-2000:]
    shown = _airctl("show", "--options", "--json", out=out)
    assert shown.exit_code == 0, shown.output[-2000:]
    text = shown.output
    start = 0 if text.startswith("{") else text.index("\n{") + 1  # stderr's lines, if any, come before it
    return json.JSONDecoder().raw_decode(text, start)[0]


def test_an_option_that_changes_nothing_and_one_that_names_its_stage(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    assert _options(out)["rows"] == []  # the baseline: no option given
    # no input is mutated in place: the pass it switches off changed nothing
    (row,) = _options(out, "debug.aclgraph.disable_reinplace_input_mutated_ops_pass=True")["rows"]
    assert row["reached"] is True and row["stage"] is None and row["changed"].startswith("no stage changed")
    # the fused addmm stays out of place: the reinplacing pass is what changed
    (row,) = _options(out, "debug.aclgraph.disable_reinplace_inplaceable_ops_pass=True")["rows"]
    assert row["stage"] == "1-inference/after:reinplace_inplaceable_ops_pass (ran in the other run only)"

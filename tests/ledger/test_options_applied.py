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


def _json(text: str) -> dict:
    start = 0 if text.startswith("{") else text.index("\n{") + 1  # stderr's lines, if any, come before it
    return json.JSONDecoder().raw_decode(text, start)[0]


def _options(out: Path, *option: str) -> dict:
    done = _airctl(*COMPILE, *[a for o in option for a in ("--option", o)], out=out)
    assert done.exit_code == 0, done.output[-2000:]
    shown = _airctl("show", "--options", "--json", out=out)
    assert shown.exit_code == 0, shown.output[-2000:]
    return _json(shown.output)


def test_an_option_that_changes_nothing_and_one_that_names_its_stage(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    assert _options(out)["rows"] == []  # the baseline: no option given
    # no input is mutated in place: the pass it switches off changed nothing
    (row,) = _options(out, "debug.aclgraph.disable_reinplace_input_mutated_ops_pass=True")["rows"]
    assert row["reached"] is True and row["stage"] is None and row["changed"].startswith("no stage changed")
    # the fused addmm stays out of place: the reinplacing pass is what changed
    (row,) = _options(out, "debug.aclgraph.disable_reinplace_inplaceable_ops_pass=True")["rows"]
    assert row["stage"] == "1-inference/after:reinplace_inplaceable_ops_pass (ran in the other run only)"


def test_two_views_of_show_are_one_json_document_keyed_by_option(tmp_path: Path) -> None:
    """``show --options --phases --json`` printed two documents one after the other (no JSON reader takes
    that); it is one object, each view under its option's name, as each prints alone."""
    out = tmp_path / "runs"
    _options(out)
    both = _airctl("show", "--options", "--phases", "--json", out=out)
    assert both.exit_code == 0, both.output[-2000:]
    document = _json(both.output)
    assert sorted(document) == ["options", "phases"]
    assert document["options"] == _json(_airctl("show", "--options", "--json", out=out).output)
    assert [r["phase"] for r in document["phases"]["rows"]] == \
        [r["phase"] for r in _json(_airctl("show", "--phases", "--json", out=out).output)["rows"]]

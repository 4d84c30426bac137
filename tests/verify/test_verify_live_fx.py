"""The verifier on live torch.fx graphs from the sim backend: the fixtures match what read_fx gives,
and the R11 pass fixture is caught the way the pass runner will call it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from airctl.verify import finding_for_returned_graph, verify

CHECKS = Path(__file__).resolve().parents[2] / "fixtures" / "checks"


@pytest.fixture(scope="module")
def torch_and_builders():  # noqa: ANN201
    from airctl.sim.session import load_torchair

    load_torchair()
    import torch

    spec = importlib.util.spec_from_file_location("make_checks", CHECKS / "make_checks.py")
    builders = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builders)
    return torch, builders


def test_live_seed_matches_fixture_and_modes(torch_and_builders) -> None:  # noqa: ANN001
    from airctl.io.fx_reader import read_fx
    from airctl.io.json_io import read_json

    _, builders = torch_and_builders
    live = read_fx(builders.seed("sub"), name="seed_docs")
    order = [n.name for n in live.nodes]
    assert order == ["arg0_1", "scope_enter_default", "mm", "abs_1", "record_default", "scope_exit_default", "add",
                     "wait_default", "sub", "output"]
    assert [n.name for n in read_json(CHECKS / "ok" / "seed_docs.json").nodes] == order
    assert verify(live, "max-autotune") == []
    no_wait = read_fx(builders.seed(None))
    assert {f.rule for f in verify(no_wait, "reduce-overhead")} == {"race_cross_stream_without_wait"}
    assert not [f for f in verify(no_wait, "max-autotune") if f.severity == "error"]


def test_pass_returning_new_graph(torch_and_builders) -> None:  # noqa: ANN001
    torch, builders = torch_and_builders
    spec = importlib.util.spec_from_file_location("returns_new_graph", CHECKS / "passes" / "returns_new_graph.py")
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    gm = builders._trace(lambda arg0: torch.mm(arg0, arg0), (3, 3))
    before = gm.code
    returned = plugin.custom_pre_pass(gm, [], None)
    expect = json.loads((CHECKS / "passes" / "returns_new_graph.expect.json").read_text())["expect"]
    for mode, want in expect.items():
        f = finding_for_returned_graph("custom_pre_pass", returned, mode=mode, changed_in_place=gm.code != before)
        assert f is not None
        assert [{"rule": f.rule, "severity": f.severity, "nodes": f.nodes}] == want

"""Verify-each: the verifier runs after every pass and the ledger names the first stage of a finding."""

from __future__ import annotations

import copy

import pytest

from airctl.pipeline.compile.compiler import CompileRequest, compile_model
from tests.conftest import MODELS
from tests.pipeline.seed_pass import custom_pre_pass

pytestmark = pytest.mark.slow


def _returns_new_graph(gm, example_inputs, config):
    return copy.deepcopy(gm)


def test_race_in_reduce_overhead_is_found_at_the_pass_that_made_it(runs_dir) -> None:
    result = compile_model(CompileRequest.of(MODELS / "seed.py", mode="reduce-overhead", out_dir=runs_dir,
                                          backend="sim", pre_pass=custom_pre_pass))
    assert result.error is None
    races = [f for f in result.index.to_json()["findings"] if f["rule"] == "race_cross_stream_without_wait"]
    assert races and races[0]["stage"] == "after:post_grad_custom_pre_pass"
    assert result.index.to_json()["first_stage_with_finding"]["race_cross_stream_without_wait"].endswith(
        "after:post_grad_custom_pre_pass")


def test_same_plan_in_max_autotune_has_no_error(runs_dir) -> None:
    result = compile_model(CompileRequest.of(MODELS / "seed.py", out_dir=runs_dir, backend="sim",
                                          pre_pass=custom_pre_pass))
    assert not [f for f in result.index.to_json()["findings"] if f["severity"] == "error"]


def test_pass_returning_a_new_graph_is_reported(runs_dir) -> None:
    result = compile_model(CompileRequest.of(MODELS / "seed.py", out_dir=runs_dir, backend="sim",
                                          post_pass=_returns_new_graph))
    stage = next(s for s in result.index.to_json()["graphs"][0]["stages"]
                 if s["name"] == "after:post_grad_custom_post_pass")
    assert stage["returned_new_graph"] == "GraphModule"
    rules = {f["rule"] for f in result.index.to_json()["findings"]}
    assert "pass_returned_new_graph" in rules

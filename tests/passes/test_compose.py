"""YAML passes through TorchAir's hooks: identical to the hand-written pass, every pass in the ledger,
result-changing passes named, bad passes reported by name with the ledger kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airctl.errors import PassError
from airctl.pipeline.apply import ApplyResult, apply_passes
from airctl.pipeline.target import Target
from tests.conftest import MODELS, ledger_json, ledger_text
from tests.passes.conftest import FIXTURES, PASSES

pytestmark = pytest.mark.slow
SEED = MODELS / "seed.py"
_RUNS: dict[str, ApplyResult] = {}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("passes-runs")

    def go(path: Path, plan: bool = False) -> ApplyResult:
        key = f"{path}:{plan}"
        if key not in _RUNS:
            _RUNS[key] = apply_passes(Target(SEED, backend="sim", passes_file=path), out=out, plan=plan, report=False)
        return _RUNS[key]

    return go


def index_of(result: ApplyResult) -> dict:
    return json.loads((result.ledger_dir / "index.json").read_text())


def stage_graph(ledger: Path, index: dict, name: str) -> list[tuple]:
    (stage,) = [s for s in index["graphs"][0]["stages"] if s["name"] == name]
    nodes = ledger_json(ledger / stage["file"])["nodes"]
    return [(n["name"], n["op"], n.get("inputs"), n.get("attrs")) for n in nodes]


def test_stream_yaml_equals_handwritten_pass_through_torchair(run, tmp_path: Path) -> None:
    """Acceptance 1: same nodes, order, targets and args after the pre hook, and in the final FX graph."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from tests.passes.handwritten_pass import _custom_pre_pass

    ours = run(PASSES / "stream.yaml")
    theirs = compile_model(CompileRequest.of(SEED, out_dir=tmp_path, backend="sim", pre_pass=_custom_pre_pass,
                                          report=False))
    assert ours.error is None and theirs.error is None
    a, b = index_of(ours), theirs.index.to_json()
    for stage in ("after:post_grad_custom_pre_pass", "fx-final"):
        assert stage_graph(ours.ledger_dir, a, stage) == stage_graph(theirs.ledger_dir, b, stage)
    assert ours.execution["matches_eager"] is True


def test_every_pass_has_snapshot_delta_time_and_check_in_the_ledger(run) -> None:
    """Acceptance 3: one ledger stage per YAML pass, between AOT and TorchAir's own passes."""
    result = run(PASSES / "stream.yaml")
    index = index_of(result)
    stages = index["graphs"][0]["stages"]
    names = [s["name"] for s in stages]
    assert names[1:5] == ["aot-inference", "yaml:mm-abs-on-stream1", "yaml:sub-waits",
                          "after:post_grad_custom_pre_pass"]
    scope, wait = stages[2], stages[3]
    assert (scope["changed"], scope["node_delta"], scope["nodes"]) == (True, 3, 9)
    assert (wait["changed"], wait["node_delta"], wait["nodes"]) == (True, 1, 10)
    assert scope["inserted"] == ["scope_enter_default", "record_default", "scope_exit_default"]
    assert wait["inserted"] == ["wait_default"]
    for s in (scope, wait):
        assert s["seconds"] is not None and s["seconds"] >= 0
        assert s["eager_check"]["matches"] is True
        snapshot = ledger_json(result.ledger_dir / s["file"])
        assert len(snapshot["nodes"]) == s["nodes"]
        assert ledger_text(result.ledger_dir / s["text"]).count("torch.ops.air.") >= 3
    streams = {n["name"]: n.get("stream") for n in ledger_json(result.ledger_dir / wait["file"])["nodes"]}
    assert streams["mm"] == streams["abs_1"] == "stream_1" and streams.get("sub") is None


def test_instruments_see_each_yaml_pass(tmp_path: Path) -> None:
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.pipeline.pass_hooks import build_hooks

    calls: list[tuple[str, str, int]] = []

    class Recorder:  # an instrument of the one pass runner: sees TorchAir's passes and the YAML ones alike
        def before_pass(self, run):
            calls.append(("before", run.name, run.graph_id, len(run.before)))

        def after_pass(self, run):
            calls.append(("after", run.stage, run.graph_id, len(run.after), run.facts["changed"]))

        def after_pass_failed(self, run, error):
            calls.append(("failed", run.name, run.graph_id, len(run.after)))

    hooks = build_hooks(PASSES / "stream.yaml")
    result = compile_model(CompileRequest.of(SEED, out_dir=tmp_path, backend="sim", hooks=hooks,
                                          instruments=[Recorder()], stop_after_passes=True, report=False))
    assert result.index.to_json()["status"] == "planned"
    gid = "1-inference"
    yaml_calls = [c for c in calls if c[1].startswith("yaml:")]
    assert yaml_calls == [("before", "yaml:mm-abs-on-stream1", gid, 6),
                          ("after", "yaml:mm-abs-on-stream1", gid, 9, True),
                          ("before", "yaml:sub-waits", gid, 9), ("after", "yaml:sub-waits", gid, 10, True)]
    # the YAML passes run inside TorchAir's custom pre pass, which the same runner observes around them
    names = [c[1] for c in calls]
    assert names.index("post_grad_custom_pre_pass") < names.index("yaml:mm-abs-on-stream1")
    assert ("after", "after:post_grad_custom_pre_pass", gid, 10, True) in calls
    assert ("after", "after:view_to_reshape", gid, 10, False) in calls


def test_pass_that_changes_results_is_named(run) -> None:
    """Acceptance 4: the add->sub plugin is caught by the per-pass eager check, by name."""
    result = run(FIXTURES / "add_to_sub.yaml")
    assert isinstance(result.error, PassError)
    assert "pass `add-becomes-sub` changes the graph's results" in result.error.message
    assert result.error.line == 8
    index = index_of(result)
    assert "add-becomes-sub" in index["error"]  # the ledger names the pass too
    runs = {p.name: p for p in result.passes}
    assert runs["mm-abs-on-stream1"].eager_check["matches"] is True
    assert runs["add-becomes-sub"].eager_check["matches"] is False


def test_selector_matching_nothing_fails_with_candidates_and_keeps_the_ledger(run) -> None:
    result = run(FIXTURES / "no_match.yaml")
    assert isinstance(result.error, PassError)
    assert "matched no node" in result.error.message and (result.error.line, result.error.column) == (7, 13)
    assert "aten.mm.default" in result.error.hint
    index = index_of(result)
    assert index["status"] == "failed"
    assert "failed:yaml:matmul-on-s1" in [s["name"] for s in index["graphs"][0]["stages"]]


def test_optional_selector_miss_skips_the_pass(run) -> None:
    result = run(FIXTURES / "optional_no_match.yaml")
    assert result.error is None and result.status == "ok"
    (only,) = result.passes
    assert only.skipped and "matched no node" in only.skipped and only.changed is False


def test_raising_plugin_names_the_pass_and_shows_the_users_traceback(run) -> None:
    result = run(FIXTURES / "raising_plugin.yaml")
    error = result.error
    assert isinstance(error, PassError)
    assert "pass `explodes` (python plugin plugins.py:explode) raised KeyError" in error.message
    assert 'plugins.py", line 10, in explode' in error.message and 'helper["width"]' in error.message
    assert error.file.endswith("fixtures/passes/plugins.py") and error.line == 10
    assert index_of(result)["status"] == "failed"
    assert result.passes[0].stage == "failed:yaml:explodes"


def test_plugin_returning_a_new_graph_is_a_warning(run) -> None:
    result = run(FIXTURES / "returns_new_graph.yaml")
    assert result.error is None
    (warning,) = result.warnings
    assert "returned a GraphModule and left gm unchanged" in warning.message and "R11" in warning.message
    assert result.passes[0].returned_new_graph == "GraphModule" and result.passes[0].changed is False
    findings = index_of(result)["findings"]
    assert any(f["rule"] == "pass_returned_new_graph" and f["stage"] == "yaml:copies" for f in findings)


def test_bad_yaml_still_leaves_a_ledger(run) -> None:
    result = run(FIXTURES / "syntax_error.yaml")
    assert result.error is not None and result.error.line == 7
    index = index_of(result)
    assert index["status"] == "failed" and index["command"] == "passes apply"
    assert index["error_detail"]["line"] == 7


def test_plan_stops_after_the_passes(run) -> None:
    result = run(PASSES / "stream.yaml", plan=True)
    assert result.status == "planned" and result.execution is None
    assert [p.name for p in result.passes] == ["mm-abs-on-stream1", "sub-waits"]
    assert not any(s["name"] == "ge-original" for s in index_of(result)["graphs"][0]["stages"])

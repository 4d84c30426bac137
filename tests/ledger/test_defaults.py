"""One rule for the default stage of each request (docs/ledger.md, "Default stages"), and the
commands that read a ledger following it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.ledger.defaults import Request, StageRequest, default_stage
from airctl.ledger.index import RunIndex
from tests.io.dumps import DUMPS, FX_AFTER, FX_BEFORE

MAX_AUTOTUNE = ["dynamo", "aot-inference", "yaml:p", "after:view_to_reshape", "fx-final", "ge-original",
                "ge:after:pass", "ge-optimized"]
REDUCE_OVERHEAD = ["dynamo", "aot-inference", "after:view_to_reshape", "fx-final", "after:remove_cat_ops",
                   "after:resolve_default_stream_markers"]
FAILED = ["dynamo", "aot-inference", "failed:yaml:p"]
NO_AOT = ["after:x", "after:y"]


def _index(*graphs: list[str]) -> RunIndex:
    return RunIndex.from_json({"graphs": [
        {"id": f"{k + 1}-inference", "stages": [
            {"index": i, "name": n, "file": f"{k}/{i}.json", "dialect": "ge" if n.startswith("ge") else "fx"}
            for i, n in enumerate(names)]}
        for k, names in enumerate(graphs)]})


def _pick(names: list[str], request: StageRequest | Request) -> str | None:
    found = default_stage(_index(names), request)
    return None if found is None else found.name


DUMP, FX, PBTXT = StageRequest(Request.DUMP), StageRequest(Request.DUMP, "fx"), StageRequest(Request.DUMP, "pbtxt")


@pytest.mark.parametrize(("request_", "stages", "expected"), [
    (DUMP, MAX_AUTOTUNE, "ge-optimized"),  # json, svg, ...: the last stage
    (DUMP, REDUCE_OVERHEAD, "after:resolve_default_stream_markers"),
    (StageRequest(Request.DUMP, "svg"), FAILED, "failed:yaml:p"),
    (FX, MAX_AUTOTUNE, "fx-final"),
    (FX, REDUCE_OVERHEAD, "fx-final"),
    (FX, FAILED, "failed:yaml:p"),  # no fx-final: the last FX stage
    (PBTXT, MAX_AUTOTUNE, "ge-optimized"),
    (StageRequest(Request.DUMP, "txt"), MAX_AUTOTUNE, "ge-optimized"),
    (PBTXT, REDUCE_OVERHEAD, "after:resolve_default_stream_markers"),  # no GE stage: the last stage
    (Request.DIFF_FROM, MAX_AUTOTUNE, "aot-inference"),
    (Request.DIFF_FROM, NO_AOT, "after:x"),
    (Request.DIFF_TO, MAX_AUTOTUNE, "fx-final"),  # the last FX stage
    (Request.DIFF_TO, REDUCE_OVERHEAD, "after:resolve_default_stream_markers"),
    (StageRequest(Request.DIFF_TO, dialect="ge"), MAX_AUTOTUNE, "ge-optimized"),
    (Request.DIFF_SOURCE, MAX_AUTOTUNE, "ge-optimized"),
    (Request.CHECK, MAX_AUTOTUNE, "fx-final"),
    (Request.CHECK, REDUCE_OVERHEAD, "fx-final"),  # not the aclgraph passes after it
    (Request.CHECK, FAILED, "failed:yaml:p"),
    (Request.CHECK, ["ge-original", "ge-optimized"], "ge-optimized"),  # an import of GE dumps
    (Request.PROFILE, MAX_AUTOTUNE, "fx-final"),
    (Request.PROFILE, REDUCE_OVERHEAD, "after:resolve_default_stream_markers"),
    (Request.REPORT, MAX_AUTOTUNE, "yaml:p"),  # what the user came for: their passes (issue 32)
    (Request.REPORT, REDUCE_OVERHEAD, "fx-final"),  # no YAML pass: the final FX graph, not the aclgraph passes
    (Request.REPORT, FAILED, "failed:yaml:p"),
    (Request.REPORT, ["ge-original", "ge-optimized"], "ge-optimized"),  # an import of GE dumps
    (Request.DUMP, [], None),
])
def test_default_stage_per_request(request_: StageRequest | Request, stages: list[str], expected: str | None) -> None:
    assert _pick(stages, request_) == expected


def test_default_stage_reads_the_graph_asked_for_else_the_first() -> None:
    index = _index(MAX_AUTOTUNE, REDUCE_OVERHEAD)
    assert default_stage(index, Request.REPORT).graph_id == "1-inference"
    found = default_stage(index, Request.REPORT, "2-inference")
    assert (found.graph_id, found.name) == ("2-inference", "fx-final")
    assert default_stage(RunIndex.from_json({"graphs": []}), Request.DUMP) is None


def test_dialect_is_told_by_the_name_when_the_index_has_none() -> None:
    index = RunIndex.from_json({"graphs": [{"id": "g", "stages": [
        {"index": i, "name": n, "file": f"{i}.json"} for i, n in enumerate(["aot-inference", "fx-final",
                                                                           "ge-optimized"])]}]})
    assert default_stage(index, Request.DIFF_TO).name == "fx-final"
    assert default_stage(index, StageRequest(Request.DUMP, "txt")).name == "ge-optimized"


# -- the commands follow the rule ---------------------------------------------------------------
def _ledger(root: Path) -> Path:
    """aot-inference (FX, 6 nodes), fx-final (FX, 10 nodes), ge-optimized (GE)."""
    from airctl.io.read import read_graph, write_graph

    (root / "graphs" / "g0").mkdir(parents=True)
    shutil.copy(FX_BEFORE, root / "graphs" / "g0" / "000.json")
    shutil.copy(FX_AFTER, root / "graphs" / "g0" / "001.json")
    (root / "graphs" / "g0" / "002.json").write_text(write_graph(read_graph(DUMPS / "stream" / "optimized.pbtxt"),
                                                                 "json"))
    stages = [{"index": i, "name": n, "dialect": d, "file": f"graphs/g0/{i:03d}.json"}
              for i, (n, d) in enumerate([("aot-inference", "fx"), ("fx-final", "fx"), ("ge-optimized", "ge")])]
    (root / "index.json").write_text(json.dumps({"mode": "max-autotune", "graphs": [
        {"id": "g0", "kind": "inference", "stages": stages}]}))
    return root


def test_dump_defaults_follow_the_output_type(tmp_path: Path) -> None:
    root = _ledger(tmp_path / "run")
    app = build_app()

    def dump(*args: str) -> str:
        result = CliRunner().invoke(app, ["dump", str(root), *args])
        assert result.exit_code == 0, result.output
        return result.stdout

    assert dump() == dump("--stage", "ge-optimized")  # json: the last stage
    assert dump("--type", "fx") == dump("--stage", "fx-final", "--type", "fx")
    assert dump("--type", "pbtxt") == dump("--stage", "ge-optimized", "--type", "pbtxt")
    assert dump("--type", "fx") != dump("--stage", "ge-optimized", "--type", "fx")


def test_check_and_report_follow_the_rule(tmp_path: Path) -> None:
    from airctl.ledger.reader import Ledger
    from airctl.report.ledger_data import ledger_payload
    from airctl.verify.inputs import ledger_targets

    root = _ledger(tmp_path / "run")
    (target,) = ledger_targets(root, None)
    assert target.label == "g0/fx-final" and target.mode == "max-autotune"
    payload = ledger_payload(Ledger.open(root))
    assert payload["graphs"][0]["open"] == 1  # fx-final: no YAML pass ran, and GE's stage is not what users want
    assert payload["pane"] == "both"  # its stream plan has streams: the lanes open beside the graph


@pytest.mark.parametrize(("mode", "said"), [("max-autotune", "TorchAir writes txt of GE graphs only"),
                                            ("reduce-overhead", "makes no GE graph")])
def test_dump_says_whose_txt_an_fx_stage_is_in_the_runs_mode(tmp_path: Path, mode: str, said: str) -> None:
    root = _ledger(tmp_path / "run")
    index = json.loads((root / "index.json").read_text())
    (root / "index.json").write_text(json.dumps({**index, "mode": mode}))
    result = CliRunner().invoke(build_app(), ["dump", str(root), "--stage", "fx-final", "--type", "txt"])
    assert result.exit_code == 0, result.output
    assert said in result.output and "written by airctl" in result.output, result.output

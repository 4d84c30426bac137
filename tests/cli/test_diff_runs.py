"""``airctl diff RUN_A RUN_B`` (issue 13): two ledgers of the seed model, paired stage by stage.

The runs are real compiles (sim backend) of fixtures/models/seed.py: without passes, with
passes/stream.yaml (mm..abs on stream_1, ``sub`` waits) and with fixtures/passes/ordered_wait.yaml
(the same, but ``add`` waits).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.ledger.runs import mark_latest

pytestmark = pytest.mark.slow
runner = CliRunner()
STREAM, ORDERED = "passes/stream.yaml", "fixtures/passes/ordered_wait.yaml"
FX_ADDED = {"air.scope_enter.default", "air.record.default", "air.scope_exit.default", "air.wait.default"}


def diff(*args: object):
    return runner.invoke(build_app(), ["diff", *map(str, args)])


def ledger(compile_fixture, passes: str | None) -> Path:
    result = compile_fixture("seed", passes=passes)
    assert result.error is None, result.error
    return result.ledger_dir


def stages(data: dict) -> dict[str, dict]:
    (graph,) = data["graphs"]
    return {s["name"]: s for s in graph["stages"]}


def test_without_and_with_passes_json(compile_fixture) -> None:
    r = diff(ledger(compile_fixture, None), ledger(compile_fixture, STREAM), "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["a"]["passes"] is None and data["b"]["passes"].endswith(STREAM)
    by_name = stages(data)
    assert by_name["dynamo"]["status"] == "same" and "diff" not in by_name["dynamo"]
    assert {n for n, s in by_name.items() if s["status"] == "only_b"} >= {"yaml:mm-abs-on-stream1", "yaml:sub-waits"}
    fx = by_name["fx-final"]["diff"]
    assert by_name["fx-final"]["status"] == "differs"
    assert {n["op"] for n in fx["added"]} == FX_ADDED and not fx["removed"]
    assert {c["name"]: c["changes"] for c in fx["changed"]} == {
        "mm": {"stream": {"old": None, "new": "stream_1"}}, "abs_1": {"stream": {"old": None, "new": "stream_1"}}}
    assert fx["edges_added"] == [{"src": "record_default", "dst": "wait_default", "kind": "sync"}]
    ge = by_name["ge-optimized"]["diff"]
    assert not ge["added"] and not ge["removed"] and {c["name"] for c in ge["changed"]} == {"MatMul", "Abs"}
    assert ge["edges_added"] == [{"src": "Abs", "dst": "Sub", "kind": "control"}] and not ge["edges_removed"]
    assert data["summary"]["differ"] == sum(s["status"] == "differs" for s in by_name.values())


def test_two_pass_files_text(compile_fixture) -> None:
    r = runner.invoke(build_app(), ["diff", str(ledger(compile_fixture, STREAM)),
                                    str(ledger(compile_fixture, ORDERED))], color=True)
    assert r.exit_code == 0, r.output
    text = r.stdout
    assert "only in A: yaml:sub-waits" in text and "only in B: yaml:add-waits" in text
    # the FX graphs have the same nodes and edges: the wait moved, and that is the whole FX diff
    assert "… fx-final (" in text and "~ wait_default  air.wait.default" in text
    assert "place: before sub → before add" in text
    # in GE the wait is a control edge, now to the Const that add reads (TorchAir's conversion)
    assert "… ge-optimized (" in text
    assert "the same diff; the node counts are ge-original's)" in text  # the header's counts: the first stage's
    assert "+ edge Abs → Const  (control)" in text and "- edge Abs → Sub  (control)" in text


def test_two_pass_files_json_and_html(compile_fixture, tmp_path: Path) -> None:
    page = tmp_path / "runs.html"
    r = diff(ledger(compile_fixture, STREAM), ledger(compile_fixture, ORDERED), "--json", "--html", page)
    assert r.exit_code == 0, r.output
    by_name = stages(json.loads(r.stdout))
    (change,) = by_name["fx-final"]["diff"]["changed"]
    assert change["name"] == "wait_default" and change["changes"] == {
        "place": {"old": "before sub", "new": "before add"}}
    ge = by_name["ge-optimized"]["diff"]
    assert ge["edges_added"] == [{"src": "Abs", "dst": "Const", "kind": "control"}]
    assert ge["edges_removed"] == [{"src": "Abs", "dst": "Sub", "kind": "control"}]
    html = page.read_text()
    payload = json.loads(html.split('id="airctl-data">', 1)[1].split("</script>", 1)[0])
    differing = [name for name, s in by_name.items() if s["status"] == "differs"]
    assert [g["id"] for g in payload["graphs"]] == [f"1-inference/{name}" for name in differing]
    assert [s["name"][:3] for s in payload["graphs"][-1]["stages"]] == ["A: ", "B: "]  # A then B, one layout
    assert payload["graphs"][-1]["stages"][1]["diff"]["summary"]["edges_added"] == 1


def test_one_stage_of_two_runs_and_svg(compile_fixture, tmp_path: Path) -> None:
    a, b = ledger(compile_fixture, None), ledger(compile_fixture, STREAM)
    r = diff(a, b, "--from", "ge-optimized", "--json")  # one stage named: that stage of both runs
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["edges_added"] == [{"src": "Abs", "dst": "Sub", "kind": "control"}]
    r = diff(a, b, "--svg", tmp_path / "d.svg")
    assert r.exit_code == 2 and "--svg draws one diff" in r.stderr and "--from STAGE" in r.stderr


def test_runs_by_id_latest_folder_or_option_give_one_report(compile_fixture, tmp_path: Path) -> None:
    out = tmp_path / "runs"  # an --out folder of its own: A, then B the current run
    a, b = (shutil.copytree(run, out / run.name) for run in (ledger(compile_fixture, p) for p in (None, STREAM)))
    mark_latest(out, b.name)
    reports = [diff(*args, "--out", out, "--json") for args in (
        [a.name, b.name], [a.name[-8:], "latest"], [a, b],
        ["--run", a.name, "--run", "latest"], ["--run", a, "--run", b])]
    assert all(r.exit_code == 0 for r in reports), [r.output for r in reports]
    assert len({r.stdout for r in reports}) == 1
    data = json.loads(reports[0].stdout)
    assert (data["a"]["run_id"], data["b"]["run_id"]) == (a.name, b.name)
    assert stages(data)["ge-optimized"]["diff"]["edges_added"] == [{"src": "Abs", "dst": "Sub", "kind": "control"}]
    r = diff(a.name, "no-such-run", "--out", out)
    assert r.exit_code == 2 and "no such file, ledger folder or run" in r.stderr and "airctl runs" in r.stderr


def test_two_identical_experts_swapping_the_side_stream_are_each_listed_as_themselves(compile_fixture) -> None:
    """Issue 32, acceptance 3: expert 0 on stream_1 in A, expert 1 in B (fixtures/models/experts.py)."""
    from airctl.ledger.reader import Ledger

    runs = []
    for passes in ("fixtures/passes/expert0_on_stream1.yaml", "fixtures/passes/expert1_on_stream1.yaml"):
        result = compile_fixture("experts", passes=passes)
        assert result.error is None, result.error
        runs.append(result.ledger_dir)
    r = diff(*runs, "--json")
    assert r.exit_code == 0, r.output
    by_name = stages(json.loads(r.stdout))
    for stage in ("fx-final", "ge-optimized"):
        report = by_name[stage]["diff"]
        on_stream = []
        for run in runs:
            ledger = Ledger.open(run)
            graph = ledger.load(ledger.find_stage(stage))
            on_stream.append({n.name for n in graph.nodes  # the scope's own nodes move by place, not stream
                              if n.stream == "stream_1" and not n.op.startswith("air.scope")})
        # every moved op listed, as a stream change of that op: expert 0's off the stream, expert 1's onto it
        assert {c["old_name"] for c in report["changed"] if "stream" in c["changes"]} >= on_stream[0]
        assert {c["name"] for c in report["changed"] if "stream" in c["changes"]} >= on_stream[1]
        assert len([c for c in report["changed"] if "stream" in c["changes"]]) == len(on_stream[0]) + len(
            on_stream[1])
        assert not report["added"] and not report["removed"]
        added, removed = ({(e["src"], e["dst"], e["kind"]) for e in report[key]}
                          for key in ("edges_added", "edges_removed"))
        assert not added & removed
        assert len(report["renamed"]) == report["summary"]["renamed"]  # renamed nodes are listed
    text = diff(*runs).stdout
    assert "ge-original" in text and ("renamed" not in text or "renamed (" in text)


@pytest.mark.parametrize("empty_side", ["a", "b"])
def test_a_run_without_graphs_is_refused_not_reported_as_no_stage_differing(
        compile_fixture, tmp_path: Path, empty_side: str) -> None:
    empty = tmp_path / "20261208-000000-nosuch-0000"
    empty.mkdir()
    (empty / "index.json").write_text(json.dumps({"run_id": empty.name, "command": "coverage", "status": "failed",
                                                  "graphs": []}))
    full = ledger(compile_fixture, None)
    result = diff(*((empty, full) if empty_side == "a" else (full, empty)))
    assert result.exit_code == 2, result.output
    assert "has no graph stages" in result.output and "no stage differs" not in result.output, result.output

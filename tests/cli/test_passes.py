"""``airctl passes`` in-process: list, apply (--diff, --plan, --json), explain, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "fixtures" / "models" / "seed.py"
PASSES = REPO / "passes"
BAD = REPO / "fixtures" / "passes"
runner = CliRunner()


def airctl(*args: object):  # noqa: ANN201
    return runner.invoke(build_app(), ["passes", *map(str, args)])


def test_list_shows_every_kind_from_the_schema() -> None:
    from airctl.passes.schema import KINDS

    r = airctl("list")
    assert r.exit_code == 0, r.output
    for kind in KINDS:
        assert kind in r.stdout
    assert "stream→_user_stream_label" in r.stdout and "aicore_num→_op_aicore_num" in r.stdout


def test_list_json_is_the_schema() -> None:
    r = airctl("list", "--json")
    doc = json.loads(r.stdout)
    assert doc["version"] == 1
    assert doc["kinds"]["wait"]["required"] == ["name", "kind", "before", "on"]
    assert set(doc["selector"]["properties"]) == {"target", "name", "source", "module", "collective", "index", "nth"}


def test_list_unknown_kind_suggests() -> None:
    r = airctl("list", "stream_scop")
    assert r.exit_code == 2 and "did you mean `stream_scope`?" in r.output


@pytest.mark.slow
def test_apply_diff_shows_exactly_the_four_inserted_nodes(tmp_path: Path) -> None:
    """Acceptance 3: --diff on the seed example: scope_enter, record, scope_exit, wait, nothing else."""
    r = airctl("apply", PASSES / "stream.yaml", "--model", SEED, "--diff", "--backend", "sim", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    added = [ln for ln in r.stdout.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    removed = [ln for ln in r.stdout.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    assert removed == []
    assert [ln.split(" = ")[1].split("(")[0] for ln in added] == [
        "air.scope_enter.default", "air.record.default", "air.scope_exit.default", "air.wait.default"]
    assert "air.scope_enter.default(['_user_stream_label'], ['stream_1'])" in added[0]
    assert "air.wait.default([record#0])" in added[3]
    assert "execution: matches eager" in r.stdout


@pytest.mark.slow
def test_apply_plan_stops_before_conversion(tmp_path: Path) -> None:
    r = airctl("apply", PASSES / "stream.yaml", "--model", SEED, "--plan", "--backend", "sim", "--out", tmp_path,
               "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["status"] == "planned" and doc["plan"] is True and doc["execution"] is None
    assert [p["name"] for p in doc["passes"]] == ["mm-abs-on-stream1", "sub-waits"]
    assert all(p["diff"] for p in doc["passes"])
    index = json.loads((Path(doc["ledger"]) / "index.json").read_text())
    assert index["status"] == "planned" and index["command"] == "passes apply"


@pytest.mark.slow
def test_apply_unchanged_passes_collapse_into_one_line(tmp_path: Path) -> None:
    r = airctl("apply", BAD / "optional_no_match.yaml", "--model", SEED, "--diff", "--backend", "sim", "--out",
               tmp_path)
    assert r.exit_code == 0, r.output
    assert "unchanged: 1-inference/yaml:matmul-on-s1" in r.stdout
    assert "@@" not in r.stdout


def test_bad_yaml_exits_2_with_location_and_keeps_a_ledger(tmp_path: Path) -> None:
    r = airctl("apply", BAD / "unknown_key.yaml", "--model", SEED, "--backend", "sim", "--out", tmp_path)
    assert r.exit_code == 2
    assert "unknown_key.yaml:7:5: error: unknown key `strem`" in r.output
    assert "did you mean `stream`?" in r.output
    (ledger,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert json.loads((ledger / "index.json").read_text())["status"] == "failed"


@pytest.mark.slow
def test_result_changing_pass_exits_3_naming_it(tmp_path: Path) -> None:
    r = airctl("apply", BAD / "add_to_sub.yaml", "--model", SEED, "--backend", "sim", "--out", tmp_path)
    assert r.exit_code == 3
    assert "pass `add-becomes-sub` changes the graph's results" in r.output


@pytest.mark.slow
def test_explain_lists_matches_with_source_lines(tmp_path: Path) -> None:
    r = airctl("explain", PASSES / "stream.yaml", "--model", SEED, "--backend", "sim", "--out", tmp_path, "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["selectors"]
    by_role = {(row["pass"], row["role"]): row for row in rows}
    (mm,) = by_role[("mm-abs-on-stream1", "from")]["matches"]
    assert mm["name"] == "mm" and mm["op"] == "aten.mm.default" and mm["source"].endswith("seed.py:8")
    (sub,) = by_role[("sub-waits", "before")]["matches"]
    assert sub["source"].endswith("seed.py:11")


@pytest.mark.slow
def test_explain_no_match_shows_candidates_and_exits_1(tmp_path: Path) -> None:
    r = airctl("explain", BAD / "no_match.yaml", "--model", SEED, "--backend", "sim", "--out", tmp_path)
    assert r.exit_code == 1, r.output
    assert "no match" in r.stdout
    assert "closest target: aten.mm.default" in r.stdout and "seed.py:8" in r.stdout


@pytest.mark.slow
def test_apply_reports_races_and_findings_honours_fail_on_and_names_the_mode_that_ran(tmp_path: Path) -> None:
    """Issue 32 (1): a racy pass file in reduce-overhead, applied to a max-autotune current run."""
    compiled = runner.invoke(build_app(), ["compile", str(SEED), "--mode", "max-autotune", "--backend", "sim",
                                           "--out", str(tmp_path)])
    assert compiled.exit_code == 0, compiled.output
    r = airctl("apply", BAD / "racy_no_wait.yaml", "--mode", "reduce-overhead", "--fail-on", "race",
               "--backend", "sim", "--out", tmp_path)
    assert r.exit_code == 1, r.output
    assert "seed.py (reduce-overhead; model from run" in r.stderr and "max-autotune" not in r.stderr
    assert "(mode reduce-overhead)" in r.stdout
    assert "stream races: 2" in r.stdout and "first: graph_" in r.stdout and ": add (" in r.stdout
    assert "verifier: 2 errors (race_cross_stream_without_wait ×2)" in r.stdout
    assert "[nodes mm, sub; " in r.stdout and "seed.py:11]" in r.stdout  # the consumer's line: where the wait goes
    assert "--fail-on race: add (" in r.stderr
    findings = r.stdout[r.stdout.index("verifier:"):r.stdout.index("ledger:")]
    assert str(REPO) not in findings  # paths relative to the working directory or the model's folder
    plain = airctl("apply", BAD / "racy_no_wait.yaml", "--mode", "reduce-overhead", "--json",
                   "--backend", "sim", "--out", tmp_path)
    assert plain.exit_code == 0  # without --fail-on: said so, and how to make it fail
    assert "hint: the command still exits 0; --fail-on race or --fail-on check makes it exit 1" in plain.stderr
    doc = json.loads(plain.stdout)
    assert doc["mode"] == "reduce-overhead" and len(doc["execution"]["races"]) == 2 and len(doc["findings"]) == 2


@pytest.mark.slow
def test_apply_of_the_same_file_in_max_autotune_has_no_race_and_passes_fail_on(tmp_path: Path) -> None:
    """Issue 32 (1), the other mode: GE synchronises the data edges, so nothing races."""
    r = airctl("apply", BAD / "racy_no_wait.yaml", "--model", SEED, "--mode", "max-autotune", "--fail-on", "race",
               "--backend", "sim", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert "(mode max-autotune)" in r.stdout and "stream races" not in r.stdout
    assert "execution: matches eager (max abs error 0)" in r.stdout


@pytest.mark.parametrize(("error", "said"), [
    (None, "no YAML pass ran (the pass file lists none, or none for the graphs compiled)"),
    ("spec", None),  # the pass file's own error says why
    ("compile", "no YAML pass ran before the compile failed")])
def test_an_apply_without_passes_says_why_none_ran(monkeypatch: pytest.MonkeyPatch, error: str | None,
                                                    said: str | None) -> None:
    import io

    from airctl.cli import output
    from airctl.cli.passes import render_apply
    from airctl.errors import CompileError, SpecError
    from airctl.pipeline.apply import ApplyResult

    shown = io.StringIO()
    monkeypatch.setattr(output.out, "_file", shown)
    failure = {None: None, "spec": SpecError("YAML syntax error"), "compile": CompileError("Dynamo failed")}[error]
    render_apply(ApplyResult(Path("p.yaml"), None, "ok" if failure is None else "failed", error=failure), diff=False)
    text = shown.getvalue()
    assert (said in text) if said else ("no YAML pass ran" not in text), text


@pytest.mark.parametrize(("command", "give"), [(["profile"], "MODEL.py as the first argument"),
                                               (["passes", "apply", "p.yaml"], "--model MODEL.py")])
def test_a_run_without_a_model_script_names_how_this_command_takes_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], give: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.yaml").write_text("version: 1\npasses: []\n")
    run = tmp_path / "airctl-runs" / "20261208-000000-script-0000"
    run.mkdir(parents=True)
    (run / "index.json").write_text(json.dumps({"run_id": run.name, "command": "run", "status": "ok", "graphs": []}))
    result = CliRunner().invoke(build_app(), [*command, "--run", run.name])
    assert result.exit_code == 2, result.output
    assert "did not compile a model script" in result.output and give in result.output, result.output
    assert ("--model" in result.output) == (give == "--model MODEL.py"), result.output


def test_suggest_names_its_folder_of_ledgers_with_runs_as_the_commands_whose_o_is_their_own(tmp_path: Path) -> None:
    for option in ("--runs", "--out"):
        result = CliRunner().invoke(build_app(), ["passes", "suggest", option, str(tmp_path / "elsewhere")])
        assert result.exit_code == 2 and "no run in" in result.output and "elsewhere" in result.output, result.output

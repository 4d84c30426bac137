"""The one SOURCE resolver (pipeline/source.py), form by form, without compiling: the whole grid of
commands × forms is tests/cli/test_run_forms.py's."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.errors import AirctlError, GraphReadError, LedgerError, ModelScriptError
from airctl.ledger.runs import mark_latest
from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.source import GRAPHS, MODELS, PREDICTABLE, RUNS, Form, resolve_source

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "fixtures" / "models" / "seed.py"
PBTXT = REPO / "fixtures" / "dumps" / "stream" / "original.pbtxt"
PY_DUMP = REPO / "fixtures" / "dumps" / "stream" / "original.py"
PROFILE = REPO / "fixtures" / "profiles" / "npu_two_streams"


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """Two runs; the older one is current."""
    runs = tmp_path / "airctl-runs"
    for run_id in ("20261127-100000-seed-aaaa", "20261127-110000-seed-bbbb"):
        writer = LedgerWriter.create(runs, "seed", command="compile")
        writer.finish()
        writer.root.rename(runs / run_id)
    mark_latest(runs, "20261127-100000-seed-aaaa")
    return runs


@pytest.mark.parametrize(("given", "run", "expected"), [
    (None, None, "aaaa"), ("latest", None, "aaaa"), (None, "latest", "aaaa"), ("bbbb", None, "bbbb"),
    (None, "20261127-110000-seed-bbbb", "bbbb"), ("latest~0", None, "aaaa"), ("aaaa", "aaaa", "aaaa"),
])
def test_every_way_to_name_a_run(out: Path, given: str | None, run: str | None, expected: str) -> None:
    for accepts in (RUNS, GRAPHS, MODELS, PREDICTABLE):
        source = resolve_source(given, run, out_dir=out, accepts=accepts)
        assert source.form is Form.RUN and source.path.name.endswith(expected)


def test_a_run_folder_and_what_is_said_about_it(out: Path) -> None:
    folder = out / "20261127-110000-seed-bbbb"
    source = resolve_source(str(folder), out_dir=out)
    assert (source.form, source.path, source.named_run) == (Form.RUN, folder, False)
    current = resolve_source(None, out_dir=out)
    assert current.named_run and current.describe() == "run 20261127-100000-seed-aaaa (the current run)"


def test_files_are_what_they_hold(out: Path) -> None:
    assert resolve_source(SEED, out_dir=out, accepts=GRAPHS).form is Form.MODEL
    assert resolve_source(PBTXT, out_dir=out, accepts=GRAPHS).form is Form.GRAPH
    assert resolve_source(PY_DUMP, out_dir=out, accepts=GRAPHS).form is Form.GRAPH  # a TorchAir py dump
    assert resolve_source(PROFILE, out_dir=out, accepts=PREDICTABLE).form is Form.PROFILE


@pytest.mark.parametrize(("given", "accepts", "error", "message"), [
    (SEED, RUNS, GraphReadError, "a model script, not a run"),
    (PBTXT, MODELS, GraphReadError, "a file, not a run or model script"),
    (PROFILE, GRAPHS, LedgerError, "not a ledger: no index.json"),
    ("nothing-here", GRAPHS, GraphReadError, "no such file, ledger folder or run"),
    ("nothing-here", RUNS, LedgerError, "no run 'nothing-here'"),
    ("missing.py", MODELS, ModelScriptError, "model script not found"),
    ("latest~5", GRAPHS, LedgerError, "0 run(s) before the current one"),  # the older one is current
])
def test_a_form_a_command_does_not_take(out: Path, given: object, accepts: frozenset, error: type,
                                        message: str) -> None:
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        resolve_source(str(given), out_dir=out, accepts=accepts)
    assert caught.value.exit_code == 2 and caught.value.hint


def test_source_and_run_are_one_or_the_other(out: Path) -> None:
    with pytest.raises(AirctlError, match="give a SOURCE or --run, not both"):
        resolve_source(PBTXT, "latest", out_dir=out, accepts=GRAPHS)
    with pytest.raises(AirctlError, match="give --model or --run, not both"):
        resolve_source(SEED, "latest", out_dir=out, accepts=MODELS, what="--model")


def test_an_empty_folder_names_the_option_that_points_elsewhere(tmp_path: Path) -> None:
    for given, option in ((None, "--out"), ("latest", "--runs"), ("latest~1", "--out")):
        with pytest.raises(LedgerError, match="no run in .* yet") as caught:
            resolve_source(given, out_dir=tmp_path / "airctl-runs", accepts=GRAPHS, option=option)
        assert f"runs in another folder: {option} DIR" in (caught.value.hint or "")


def test_latest_is_the_current_run_even_beside_a_file_of_that_name(out: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "latest").write_bytes(PBTXT.read_bytes())
    assert resolve_source("latest", out_dir=out, accepts=GRAPHS).form is Form.RUN
    assert resolve_source("./latest", out_dir=out, accepts=GRAPHS).form is Form.GRAPH


def test_a_multi_rank_runs_model_comes_with_its_ranks_pass_file_and_count(tmp_path: Path) -> None:
    """`airctl profile` (no MODEL.py) on a multi-rank run: its pass file is in the ranks' ledgers, and
    the run is profiled on as many ranks (it profiled one process without the plan)."""
    import json

    from airctl.pipeline.run.current import run_origin

    (tmp_path / "model.py").write_text("model = abs\ninputs = (1,)\n")
    (tmp_path / "plan.yaml").write_text("version: 1\npasses: []\n")
    run = tmp_path / "runs" / "20261208-000000-model-0000"
    (run / "ranks" / "0").mkdir(parents=True)
    (run / "index.json").write_text(json.dumps({
        "run_id": run.name, "command": "profile", "status": "ok", "mode": "max-autotune", "world_size": 2,
        "model": {"path": str(tmp_path / "model.py")}, "graphs": [],
        "ranks": [{"rank": 0, "ledger": "ranks/0"}, {"rank": 1, "ledger": "ranks/1"}]}))
    (run / "ranks" / "0" / "index.json").write_text(json.dumps({
        "run_id": "rank0", "command": "profile", "status": "ok", "passes": str(tmp_path / "plan.yaml"), "graphs": []}))
    origin = run_origin(tmp_path / "runs", run)
    assert origin.passes == tmp_path / "plan.yaml" and origin.world_size == 2
    index = json.loads((run / "index.json").read_text())
    (run / "index.json").write_text(json.dumps({**index, "ranks": [{"rank": 0, "ledger": "../../.."}]}))
    assert run_origin(tmp_path / "runs", run).passes is None  # a rank's ledger outside the run: not read

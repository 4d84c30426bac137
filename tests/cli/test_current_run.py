"""The current run: the product card's commands typed as written, in an empty folder (issue 12)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.ledger.runs import LATEST, list_runs, mark_latest
from tests.conftest import MODELS, REPO
from tests.warm_process import WarmProcess, start

runner = CliRunner()


def airctl(*args: object):  # noqa: ANN201
    return runner.invoke(build_app(), [str(a) for a in args])


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder holding only a model script and a YAML pass file, as a new user's would."""
    shutil.copy(MODELS / "seed.py", tmp_path / "model.py")
    shutil.copy(REPO / "passes" / "stream.yaml", tmp_path / "stream.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AIRCTL_OUT", raising=False)
    return tmp_path


def _ge_node(pbtxt: str, name: str) -> str:
    start = pbtxt.index(f'name: "{name}"')
    end = pbtxt.find("\nnode {", start)
    return pbtxt[start:end if end != -1 else len(pbtxt)]


@pytest.mark.slow
def test_the_card_loop_typed_as_written(workdir: Path) -> None:
    r = airctl("compile", "model.py", "--mode", "max-autotune")
    assert r.exit_code == 0, r.output
    first = (workdir / "airctl-runs" / LATEST).read_text().strip()

    r = airctl("passes", "apply", "stream.yaml")
    assert r.exit_code == 0, r.output
    assert f"applying stream.yaml to model.py (max-autotune; model from run {first})" in r.stderr
    applied = (workdir / "airctl-runs" / LATEST).read_text().strip()
    assert applied != first
    index = json.loads((workdir / "airctl-runs" / applied / "index.json").read_text())
    assert index["command"] == "passes apply" and index["passes"] == "stream.yaml"
    assert index["command_line"] == ["airctl", "passes", "apply", "stream.yaml"]
    assert index["model"]["sha256"] and Path(index["model"]["resolved"]) == (workdir / "model.py").resolve()

    r = airctl("dump", "--type", "pbtxt")
    assert r.exit_code == 0, r.output
    assert "TorchAir's own dump" in r.stderr and "stage ge-optimized" in r.stderr
    pbtxt = r.stdout
    for op in ("MatMul", "Abs"):  # the pass's stream on the ops it moved
        assert 'key: "_user_stream_label"' in _ge_node(pbtxt, op) and "stream_1" in _ge_node(pbtxt, op)
    assert 'input: "^Abs"' in _ge_node(pbtxt, "Sub")  # the wait's control edge
    own = next((workdir / "airctl-runs" / applied / "torchair").glob("dynamo_optimized_graph_*.pbtxt.gz"))
    assert pbtxt.rstrip("\n") == gzip.decompress(own.read_bytes()).decode().rstrip("\n")  # TorchAir's own text
    r = airctl("dump", "--type", "txt")  # TorchAir's own txt dump is kept (compressed): passed on as it is
    assert r.exit_code == 0 and "TorchAir's own dump" in r.stderr and "stage ge-optimized" in r.stderr
    own = next((workdir / "airctl-runs" / applied / "torchair").glob("dynamo_optimized_graph_*.txt.gz"))
    assert r.stdout.rstrip("\n") == gzip.decompress(own.read_bytes()).decode().rstrip("\n")

    r = airctl("profile")
    assert r.exit_code == 0, r.output
    assert "profiling model.py with stream.yaml (max-autotune, from run" in r.stderr
    profiled = (workdir / "airctl-runs" / LATEST).read_text().strip()
    trace = json.loads((workdir / "airctl-runs" / profiled / "profile" / "trace.json").read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    lanes = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert any("default" in lane for lane in lanes) and any("stream_1" in lane for lane in lanes), lanes

    # the loop goes on: check and diff with no arguments work on the current run
    assert airctl("check").exit_code == 0
    r = airctl("diff", "--run", applied)
    assert r.exit_code == 0 and "record_default" in r.stdout

    # edit the YAML (drop the wait) and apply again; the two runs' final GE graphs differ by the control edge
    yaml = (workdir / "stream.yaml").read_text()
    (workdir / "stream.yaml").write_text(yaml[:yaml.index("  - name: sub-waits")])
    r = airctl("passes", "apply", "stream.yaml", "--run", applied)
    assert r.exit_code == 0, r.output
    edited = (workdir / "airctl-runs" / LATEST).read_text().strip()
    r = airctl("diff", "--run", applied, "--run", edited, "--json")  # two runs: stage by stage
    assert r.exit_code == 0, r.output
    (graph,) = json.loads(r.stdout)["graphs"]
    report = next(s for s in graph["stages"] if s["name"] == "ge-optimized")["diff"]
    assert report["edges_removed"] == [{"src": "Abs", "dst": "Sub", "kind": "control"}] and not report["edges_added"]

    r = airctl("runs", "--json")
    runs = json.loads(r.stdout)["runs"]
    assert [x["id"] for x in runs][0] == edited and runs[0]["current"] and len(runs) == 4
    assert {x["command"] for x in runs} == {"compile", "passes apply", "profile"}
    r = airctl("show")
    assert r.exit_code == 0 and "ge-optimized" in r.stdout and edited in r.stdout


NO_RUN_COMMANDS = (["dump", "--type", "pbtxt"], ["check"], ["diff"], ["show"], ["why"], ["profile"],
                   ["profile", "--times", "estimate"], ["passes", "apply", "stream.yaml"], ["passes", "fix"],
                   ["passes", "suggest"], ["bisect"], ["repro"], ["export", "tlparse"])
RUNS_OPTION = {"dump", "repro", "export", "fix"}  # their -o/--out is their own output: the folder is --runs


@pytest.mark.parametrize("form", [[], ["latest"], ["--run", "latest"], ["latest~1"]], ids=["none", "latest", "--run",
                                                                                          "latest~1"])
def test_no_run_yet_is_a_clear_error_for_every_command(workdir: Path, form: list[str]) -> None:
    """Nothing, `latest` as SOURCE or --run, `latest~1`: every command answers the same, naming the
    folder, how to make a run and the option that names another folder."""
    for args in NO_RUN_COMMANDS:
        if args[:2] == ["passes", "apply"] and form and form[0] != "--run":
            args = [*args, "--model"]
        r = airctl(*args, *form)
        assert r.exit_code == 2, (args, form, r.output)
        assert "no run in ./airctl-runs yet" in r.stderr and "airctl compile MODEL.py" in r.stderr, (args, form)
        option = "--runs" if RUNS_OPTION & set(args[:2]) else "--out"
        assert f"runs in another folder: {option} DIR" in r.stderr, (args, form, r.stderr)
        assert "no such file" not in r.stderr and "Traceback" not in r.output
    assert not (workdir / "airctl-runs").exists() or not list_runs(workdir / "airctl-runs")


def _fake_run(out: Path, model: Path, run_id: str, **fields: object) -> Path:
    """A finished compile ledger of ``model`` (what `airctl compile` writes, without compiling)."""
    from airctl.ledger.writer import LedgerWriter
    from airctl.pipeline.run.current import model_record

    writer = LedgerWriter.create(out, model.stem, command="compile", mode="reduce-overhead",
                                 model=model_record(model, None), **fields)
    writer.finish()
    target = out / run_id
    writer.root.rename(target)
    mark_latest(out, run_id)
    return target


def test_a_deleted_current_run_and_a_moved_model_are_named(workdir: Path) -> None:
    out = workdir / "airctl-runs"
    run = _fake_run(out, workdir / "model.py", "20261123-100000-model-aaaa")
    shutil.rmtree(run)
    r = airctl("dump")
    assert r.exit_code == 2 and "the current run '20261123-100000-model-aaaa'" in r.stderr
    assert "no longer exists" in r.stderr

    _fake_run(out, workdir / "model.py", "20261123-110000-model-bbbb")
    (workdir / "model.py").rename(workdir / "moved.py")
    r = airctl("passes", "apply", "stream.yaml")
    assert r.exit_code == 2
    assert "the model script of run 20261123-110000-model-bbbb, " in r.stderr and "no longer exists" in r.stderr
    assert "--model" in r.stderr


def test_a_changed_model_is_used_as_it_is_now_with_a_warning(workdir: Path) -> None:
    from airctl.pipeline.source import MODELS, choose_model, resolve_source

    out = workdir / "airctl-runs"
    _fake_run(out, workdir / "model.py", "20261123-120000-model-cccc", passes="stream.yaml")
    current = resolve_source(None, out_dir=out, accepts=MODELS)
    same = choose_model(current, entry=None, mode=None, passes=None, reuse_passes=True)
    assert same.origin is not None and same.origin.warnings == []
    assert same.mode == "reduce-overhead" and same.passes == Path("stream.yaml")  # the run's mode and pass file
    (workdir / "model.py").write_text((workdir / "model.py").read_text() + "\n# edited\n")
    changed = choose_model(current, entry=None, mode="max-autotune", passes=None)
    assert changed.model.resolve() == (workdir / "model.py").resolve() and changed.mode == "max-autotune"
    assert changed.origin is not None and "changed since run 20261123-120000-model-cccc" in changed.origin.warnings[0]


def test_run_ids_resolve_by_unique_part_and_refuse_ambiguity(workdir: Path) -> None:
    from airctl.errors import LedgerError
    from airctl.ledger.runs import resolve_run

    out = workdir / "airctl-runs"
    a = _fake_run(out, workdir / "model.py", "20261123-130000-model-dddd")
    b = _fake_run(out, workdir / "model.py", "20261123-130500-model-eeee")
    assert resolve_run(out) == b and resolve_run(out, "dddd") == a and resolve_run(out, str(a)) == a
    mark_latest(out, a.name)  # `latest` names the current run, whichever it is
    assert resolve_run(out, LATEST) == a
    with pytest.raises(LedgerError, match="matches 2 runs"):
        resolve_run(out, "20261123-13")
    with pytest.raises(LedgerError, match="no run 'zzzz'"):
        resolve_run(out, "zzzz")
    assert resolve_run(out, "latest~0") == a
    mark_latest(out, b.name)  # latest~N counts back from the current run, as `airctl runs` lists them
    assert resolve_run(out, "latest~1") == a and resolve_run(out, "latest~0") == b
    with pytest.raises(LedgerError, match="no run 'latest~2' in .*: 1 run\\(s\\) before the current one"):
        resolve_run(out, "latest~2")
    with pytest.raises(LedgerError, match="counts runs back"):
        resolve_run(out, "latest~x")


@pytest.mark.slow
def test_two_compiles_at_once_leave_two_ledgers_and_a_valid_latest(tmp_path: Path, warm_process: WarmProcess) -> None:
    """Two processes at once, forked from the warm process (tests/warm_process.py: torch and TorchAir imported)."""
    env = {k: v for k, v in os.environ.items() if k != "TORCH_DEVICE_BACKEND_AUTOLOAD"}  # as a user's shell
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    args = ["compile", MODELS / "seed.py", "--out", "runs", "--backend", "sim"]
    children = [start(warm_process, args, tmp_path, env, tmp_path) for _ in range(2)]
    codes = [child.wait(300) for child in children]
    assert codes == [0, 0], [child.stderr[-2000:] for child in children]
    runs = list_runs(tmp_path / "runs")
    assert len(runs) == 2 and len({r.id for r in runs}) == 2 and all(r.status == "ok" for r in runs)
    latest = (tmp_path / "runs" / LATEST).read_text().strip()
    assert latest in {r.id for r in runs} and [r.id for r in runs if r.current] == [latest]
    assert not list((tmp_path / "runs").glob(".latest*.tmp"))

"""Every command that takes a SOURCE accepts every form of it (pipeline/source.py, the one resolver).

The grid is commands × forms. A run is named positionally or with ``--run``: by its id, a unique
part of it, ``latest``, ``latest~0``, its folder, or (positionally) by nothing at all, the current
run. The other forms are files from ``fixtures/``: graph files of each format TorchAir or airctl
writes, a model script (compiled first), a profiler folder, for the commands that read them. A
form a command does not take is one error, worded the same for every command."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app

REPO = Path(__file__).resolve().parents[2]
DUMPS = REPO / "fixtures" / "dumps"
SEED = REPO / "fixtures" / "models" / "seed.py"
PROFILE = REPO / "fixtures" / "profiles" / "npu_two_streams"
runner = CliRunner()
RESOLVE_ERRORS = ("no run ", "not a ledger", "matches ", "no longer exists", "no such file", "not both")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run whose passes change the numbers (exit 3): something for repro and bisect to work on."""
    cwd = tmp_path_factory.mktemp("forms")
    r = _invoke(cwd, ["compile", str(REPO / "fixtures" / "models" / "blocks.py"), "--passes",
                      str(REPO / "fixtures" / "passes" / "bisect_numbers.yaml")])
    assert r.exit_code == 3, r.output
    (run,) = [p for p in (cwd / "airctl-runs").iterdir() if (p / "index.json").is_file()]
    return cwd, run.name


def _invoke(cwd: Path, args: list[str]):  # noqa: ANN202 - typer's Result
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return runner.invoke(build_app(), args)
    finally:
        os.chdir(old)


COMMANDS = {
    "show": ["show", "{run}"],
    "why": ["why", "{run}", "--json"],
    "dump": ["dump", "{run}", "--type", "json"],
    "check": ["check", "{run}"],
    "diff": ["diff", "{run}"],
    "export": ["export", "tlparse", "{run}", "-o", "{tmp}/trace"],
    "predict": ["profile", "{run}", "--times", "estimate", "--json"],
    "suggest": ["passes", "suggest", "{run}", "-o", "{tmp}/suggested.yaml", "--json"],
    "fix": ["passes", "fix", "{run}", "-o", "{tmp}/fixed.yaml", "--no-check", "--json"],
    "apply": ["passes", "apply", str(REPO / "fixtures" / "passes" / "bisect_numbers.yaml"), "{run}"],
    "profile": ["profile", "{run}", "--steps", "1", "--warmup", "0"],
    "repro": ["repro", "{run}", "-o", "{tmp}/repro", "--json"],
    "bisect": ["bisect", "{run}", "--json", "--max-compiles", "12"],
}
POSITIONAL = ["none", "id", "part", "latest", "latest~0", "folder"]
FORMS = [*POSITIONAL, *(f"--run {form}" for form in POSITIONAL[1:])]
# these compile at every form: a few forms of each way in (the resolver is the same); passes apply
# names its run with --run only (its positional is the pass file)
COSTLY = {"apply": ["none", "--run part", "--run latest~0"], "profile": ["none", "latest", "--run folder"],
          "repro": ["none", "part", "folder", "--run latest~0"], "bisect": ["none", "latest", "--run id"]}
# bisect runs to its culprit for the current run (no form); for the other forms its first step shows it
# took the run's model, pass file and mode (the whole bisect is tests/pipeline/test_bisect.py's)
FIRST_STEP_ONLY = ["--max-compiles", "1"]
WRITES_RUNS = {"apply", "profile"}
# passes suggest predicts, searches and applies its plan at every form: these forms in the suite, its others are
# sweeps (--sweeps)
SUGGEST_FORMS = ["none", "latest", "folder", "--run part"]
GRID = [(c, f) for c in COMMANDS for f in COSTLY.get(c, FORMS)]


def _value(form: str, run_id: str, cwd: Path) -> list[str]:
    """The words a form of the run adds to the command line."""
    option, _, name = form.rpartition(" ")
    value = {"id": run_id, "part": run_id[-4:], "latest": "latest", "latest~0": "latest~0",
             "folder": str(cwd / "airctl-runs" / run_id), "none": None}[name]
    return [] if value is None else [*([option] if option else []), value]


@pytest.mark.parametrize(("command", "form"), [
    pytest.param(c, f, id=f"{c}-{f.replace(' ', '')}",
                 marks=pytest.mark.sweep if c == "suggest" and f not in SUGGEST_FORMS else ())
    for c, f in GRID])
def test_every_run_command_takes_every_form(failing_run: tuple[Path, str], tmp_path: Path, command: str,
                                            form: str) -> None:
    cwd, run_id = failing_run
    if command in WRITES_RUNS:  # the new run becomes current: in a copy, so the other cases see the same one
        shutil.copytree(cwd / "airctl-runs", tmp_path / "airctl-runs")
        cwd = tmp_path
    args: list[str] = []
    for word in COMMANDS[command]:
        args += _value(form, run_id, cwd) if word == "{run}" else [word.format(tmp=tmp_path)]
    if command == "bisect" and form != "none":
        args[args.index("--max-compiles"):] = FIRST_STEP_ONLY
    r = _invoke(cwd, args)
    text = r.output
    assert not any(e in text for e in RESOLVE_ERRORS), (args, text[-1500:])
    if command == "show":
        assert r.exit_code == 0 and run_id in text
    elif command == "why":
        assert r.exit_code == 0 and json.loads(r.stdout)["run_id"] == run_id
    elif command == "repro":
        assert r.exit_code == 0, text[-1500:]
        assert json.loads(r.stdout)["reproduces"] is True
    elif command == "bisect" and form == "none":
        assert r.exit_code == 0, text[-1500:]
        assert json.loads(r.stdout)["culprit"]["pass"] == "add-becomes-sub"
    elif command == "bisect":
        assert r.exit_code == 2 and "bisect stopped after 1 compile (--max-compiles)" in text, text[-1500:]
        (folder,) = re.findall(r"steps in (\S+)\n", text)
        done = json.loads((cwd / folder / "bisect.json").read_text())
        assert (done["model"], done["passes"], done["mode"]) == (
            str(REPO / "fixtures" / "models" / "blocks.py"), str(REPO / "fixtures" / "passes" / "bisect_numbers.yaml"),
            "max-autotune")
        assert done["problem"]["step"] == 1 and done["problem"]["problems"][0]["kind"] == "numerics"
        printed = json.loads(r.stdout)  # --json: the steps so far, and why it stopped
        assert printed["error"] == "bisect stopped after 1 compile (--max-compiles)" and "raise" in printed["hint"]
        assert printed["steps"] == done["steps"] and printed["culprit"] is None
    elif command in ("apply", "profile"):  # the run's model again: its passes change the numbers (exit 3)
        assert r.exit_code in (0, 1, 3) and f"from run {run_id}" in r.stderr, text[-1500:]
    elif command in ("predict", "suggest", "fix"):
        assert r.exit_code in (0, 1), text[-1500:]  # 1: races in the plan
        assert run_id in r.stdout, r.stdout[-1500:]  # --json names the run it read
    else:
        assert r.exit_code in (0, 1), text[-1500:]  # check: 1 when it finds errors in the plan


FILES = {  # SOURCE forms that are files, and the commands that take them
    "pbtxt": ["dump {0} --type fx", "check {0}", "diff {0} {1}"],
    "txt": ["dump {0} --type fx", "check {0}", "diff {0} {1}"],
    "py-dump": ["dump {0} --type fx", "check {0}", "diff {0} {1}"],
    "json": ["dump {0} --type fx", "check {0}", "diff {0} {1}"],
    "gz": ["dump {0} --type fx", "check {0}"],
    "listing": ["check {0}"],
    "log": ["check {0}"],
    "model": ["dump {0} --type fx", "check {0}", "passes suggest {0} -o {tmp}/s.yaml",
              "profile {0} --times estimate"],
    "profiler": ["profile {0} --times {0}"],
}
PATHS = {"pbtxt": ("stream/original.pbtxt", "stream/optimized.pbtxt"),
         "txt": ("stream/original.txt", "stream/optimized.txt"),
         "py-dump": ("stream/original.py", "stream/optimized.py"),
         "json": ("fx_before.json", "fx_after.json")}
FILE_GRID = [(form, line) for form, lines in FILES.items() for line in lines]


def _paths(form: str, tmp: Path) -> tuple[Path, Path | None]:
    if form in PATHS:
        a, b = PATHS[form]
        return DUMPS / a, DUMPS / b
    if form == "gz":
        import gzip

        (tmp / "g.pbtxt.gz").write_bytes(gzip.compress((DUMPS / "stream" / "original.pbtxt").read_bytes()))
        return tmp / "g.pbtxt.gz", None
    checks = REPO / "fixtures" / "checks"
    return {"listing": checks / "listings" / "nested_stream_scopes.txt",
            "log": checks / "logs" / "wait_dropped_at_tail.log", "model": SEED, "profiler": PROFILE}[form], None


@pytest.mark.parametrize(("form", "line"), FILE_GRID, ids=[f"{f}-{line.split()[0]}" for f, line in FILE_GRID])
def test_every_command_takes_every_file_form(tmp_path: Path, form: str, line: str) -> None:
    a, b = _paths(form, tmp_path)
    args = line.format(a, b, tmp=tmp_path).split()
    r = _invoke(tmp_path, args)
    assert not any(e in r.output for e in RESOLVE_ERRORS), (args, r.output[-1500:])
    assert r.exit_code in (0, 1), (args, r.output[-1500:])  # 1: findings or races


WRONG = [  # (command line, the one error every command gives for it)
    ("show {model}", "a model script, not a run"),
    ("why {model}", "a model script, not a run"),
    ("export tlparse {pbtxt}", "a file, not a run"),
    ("passes fix {pbtxt}", "a file, not a run"),
    ("profile {pbtxt}", "a file, not a run or model script"),
    ("dump nothing-here --type fx", "no such file, ledger folder or run"),
    ("check nothing-here", "no such file, ledger folder or run"),
    ("diff nothing-here {pbtxt}", "no such file, ledger folder or run"),
    ("dump missing.py", "model script not found"),
    ("profile missing.py", "model script not found"),
    ("dump {pbtxt} --run latest", "give a SOURCE or --run, not both"),
    ("check {pbtxt} --run latest", "give a SOURCE or --run, not both"),
    ("show {run} --run latest~1", "give a SOURCE or --run, not both"),
    ("profile {model} --run latest", "give a SOURCE or --run, not both"),
    ("passes suggest {model} --run latest", "give a SOURCE or --run, not both"),
    ("diff {pbtxt} --run latest", "give A [B] or --run, not both"),
    ("passes apply x.yaml --model {model} --run latest", "give --model or --run, not both"),
    ("dump {tmp} --type fx", "not a ledger: no index.json"),
]


@pytest.mark.parametrize(("line", "message"), WRONG, ids=[w[0].split()[0] + "-" + w[1][:12] for w in WRONG])
def test_a_form_a_command_does_not_take_is_one_error(failing_run: tuple[Path, str], tmp_path: Path, line: str,
                                                     message: str) -> None:
    cwd, run_id = failing_run
    args = line.format(model=SEED, pbtxt=DUMPS / "stream" / "original.pbtxt", run=run_id, tmp=tmp_path).split()
    r = _invoke(cwd, args)
    assert r.exit_code == 2 and message in r.stderr, (args, r.output[-1500:])
    assert "Traceback" not in r.output
    assert not list((cwd / "airctl-runs").glob("*-missing-*")), "a wrong SOURCE makes no run"

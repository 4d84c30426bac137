"""Every command that takes a run accepts every form of it (pipeline/run/source.py, the one resolver):
a run id, a unique part of one, ``latest``, the ledger folder, and nothing at all (the current run)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()
RESOLVE_ERRORS = ("no run ", "not a ledger", "matches ", "no longer exists")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run whose passes change the numbers (exit 3): something for repro and bisect to work on."""
    cwd = tmp_path_factory.mktemp("forms")
    old = Path.cwd()
    os.chdir(cwd)
    try:
        r = runner.invoke(build_app(), ["compile", str(REPO / "fixtures" / "models" / "blocks.py"), "--passes",
                                        str(REPO / "fixtures" / "passes" / "bisect_numbers.yaml")])
    finally:
        os.chdir(old)
    assert r.exit_code == 3, r.output
    (run,) = [p for p in (cwd / "airctl-runs").iterdir() if (p / "index.json").is_file()]
    return cwd, run.name


COMMANDS = {
    "show": ["show", "{run}"],
    "why": ["why", "{run}", "--json"],
    "dump": ["dump", "--run", "{run}", "--type", "json"],
    "check": ["check", "--run", "{run}"],
    "diff": ["diff", "--run", "{run}"],
    "export": ["export", "tlparse", "{run}", "-o", "{tmp}/trace"],
    "repro": ["repro", "{run}", "-o", "{tmp}/repro", "--json"],
    "bisect": ["bisect", "{run}", "--json", "--max-compiles", "12"],
}
# bisect runs to its culprit for the current run (no form); for the other forms its first step shows it
# took the run's model, pass file and mode (the whole bisect is tests/pipeline/test_bisect.py's)
FIRST_STEP_ONLY = ["--max-compiles", "1"]


def _form(form: str, run_id: str, cwd: Path) -> str | None:
    return {"id": run_id, "part": run_id[-4:], "latest": "latest", "folder": str(cwd / "airctl-runs" / run_id),
            "none": None}[form]


@pytest.mark.parametrize("form", ["id", "part", "latest", "folder", "none"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_run_command_takes_every_form(failing_run: tuple[Path, str], tmp_path: Path, command: str,
                                            form: str) -> None:
    cwd, run_id = failing_run
    value = _form(form, run_id, cwd)
    args: list[str] = []
    for word in COMMANDS[command]:
        if word == "{run}":
            if value is None:
                if args and args[-1] == "--run":
                    args.pop()
                continue
            args.append(value)
        else:
            args.append(word.format(tmp=tmp_path))
    if command == "bisect" and form != "none":
        args[args.index("--max-compiles"):] = FIRST_STEP_ONLY
    old = Path.cwd()
    os.chdir(cwd)
    try:
        r = runner.invoke(build_app(), args)
    finally:
        os.chdir(old)
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
    else:
        assert r.exit_code in (0, 1), text[-1500:]  # check: 1 when it finds errors in the plan

"""Every command that compiles honours the options every mode honours (``--seed``, ``--backend``).

Each command is run with ``--seed 7 --backend npu``: every Target it builds (a spy on
:class:`~airctl.pipeline.target.Target`) must carry both, and the command must then stop at the npu
backend (no CANN here), by name. A command that dropped either option would build a Target with the
default (no seed, ``auto``) and compile on sim. The fast test needs no compile: the backend choice
fails before TorchAir runs. ``passes fix`` needs a racy run to fix: it is compiled once, in the slow lane.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.modes import BackendName
from airctl.pipeline.target import Target
from tests.conftest import REPO

MODEL = REPO / "fixtures" / "models" / "seed.py"
PASSES = REPO / "fixtures" / "passes" / "racy_no_wait.yaml"
EVERY = ["--seed", "7", "--backend", "npu"]

# every command that compiles a model it is given, with the arguments that make it compile
COMMANDS = {
    "compile": ["compile", str(MODEL)],
    "run": ["run", str(MODEL)],
    "profile": ["profile", str(MODEL)],
    "bisect": ["bisect", str(MODEL), "--passes", str(PASSES), "--mode", "reduce-overhead", "--bad", "race"],
    "passes apply": ["passes", "apply", str(PASSES), "--model", str(MODEL)],
    "passes explain": ["passes", "explain", str(PASSES), "--model", str(MODEL)],
    "passes suggest": ["passes", "suggest", str(MODEL)],
    "coverage": ["coverage", str(MODEL)],
    "check": ["check", str(MODEL)],
    "dump": ["dump", str(MODEL)],
    "diff": ["diff", str(MODEL), str(MODEL)],
}


@pytest.fixture
def targets(monkeypatch: pytest.MonkeyPatch) -> list[Target]:
    """Every Target built while the test runs."""
    built: list[Target] = []
    original = Target.__post_init__

    def spy(self: Target) -> None:
        original(self)
        built.append(self)

    monkeypatch.setattr(Target, "__post_init__", spy)
    return built


def _invoke(args: list[str], tmp_path: Path) -> tuple[int, str]:
    out = ["--runs", str(tmp_path / "runs")] if args[0] in ("dump",) else ["--out", str(tmp_path / "runs")]
    if args[0] == "run":  # what follows the script is the script's own argv
        return _result(CliRunner().invoke(build_app(), ["run", *EVERY, *out, *args[1:]]))
    return _result(CliRunner().invoke(build_app(), [*args, *EVERY, *out]))


def _result(result: Any) -> tuple[int, str]:
    return result.exit_code, result.output


def _honoured(targets: list[Target], model: Path) -> list[Target]:
    return [t for t in targets if Path(t.model_path).resolve() == model.resolve()]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_compiling_command_carries_seed_and_backend_to_its_target(
        command: str, targets: list[Target], tmp_path: Path) -> None:
    code, output = _invoke(COMMANDS[command], tmp_path)
    mine = _honoured(targets, MODEL)
    assert mine, f"{command} built no Target of {MODEL.name}: {output}"
    assert all(t.seed == 7 and t.backend is BackendName.NPU for t in mine), \
        [(t.seed, t.backend) for t in mine]
    assert code != 0 and "npu" in output, (code, output)  # it stopped at the backend it was told to use


@pytest.mark.slow
def test_passes_fix_checks_with_the_seed_and_backend_it_was_given(targets: list[Target], tmp_path: Path) -> None:
    app = build_app()
    runs = tmp_path / "runs"
    made = CliRunner().invoke(app, ["compile", str(MODEL), "--mode", "reduce-overhead", "--passes", str(PASSES),
                                    "--out", str(runs), "--seed", "3", "--backend", "sim"])
    assert made.exit_code in (0, 1), made.output  # a racy plan: the run exists either way
    targets.clear()
    fixed = CliRunner().invoke(app, ["passes", "fix", "--runs", str(runs), "-o", str(tmp_path / "fixed.yaml"),
                                     *EVERY])
    checked = _honoured(targets, MODEL)
    assert len(checked) == 3, fixed.output  # the fixed file applied in each mode
    assert all(t.seed == 7 and t.backend is BackendName.NPU for t in checked)
    assert "npu" in fixed.output and fixed.exit_code == 1
    targets.clear()
    again = CliRunner().invoke(app, ["passes", "fix", "--runs", str(runs), "-o", str(tmp_path / "again.yaml"),
                                     "--json"])
    assert {(t.seed, t.backend) for t in _honoured(targets, MODEL)} == {(3, BackendName.SIM)}  # the run's own
    # with the run's own settings, its mode's check starts from the pre-pass graph the run kept (not the
    # other modes': the mode is part of the key), though it writes to a scratch folder
    [run] = [p.name for p in runs.iterdir() if (p / "index.json").is_file()]  # the compile's, the only one
    checks = json.loads(again.stdout)["checks"]
    assert {m: c["incremental_from"] for m, c in checks.items()} == {
        "max-autotune": None, "reduce-overhead": run, "npugraph_ex": None}, again.output

"""One output guard for every command that writes a file a user names (issue 63.1, 63.8).

``passes suggest -o`` and ``passes fix -o`` wrote wherever ``-o`` pointed: onto the model script, the
input plan, the ``latest`` pointer, a run's ``index.json`` or ``report.html``; a FIFO blocked them.
They now ask :func:`airctl.io.output_path.claim_output` (through
:mod:`airctl.pipeline.output_claim`) before any work, like ``dump -o`` and ``diff --html``: exit 2,
the reason, and nothing written. The run is compiled from copies in a temporary folder, so a guard
that let a write through could not damage the repository.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.errors import AirctlError
from airctl.io.output_path import claim_output
from tests.conftest import MODELS, REPO

runner = CliRunner()


def invoke(*args: str):  # noqa: ANN201
    from airctl.cli.app import build_app

    return runner.invoke(build_app(), list(args))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, Path]:
    """(runs folder, ledger, model script, pass file): two_chains compiled with its plan, from copies."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    root = tmp_path_factory.mktemp("guard")
    model, passes = root / "two_chains.py", root / "two_chains.yaml"
    shutil.copy(MODELS / "two_chains.py", model)
    shutil.copy(REPO / "passes" / "two_chains.yaml", passes)
    runs = root / "runs"
    result = compile_model(CompileRequest.of(model, mode="reduce-overhead", out_dir=runs, backend="sim",
                                             passes_file=str(passes), stop_after_passes=True))
    assert result.ledger_dir is not None
    return runs, Path(result.ledger_dir), model, passes


def _refused(result, target: Path, before: bytes | None) -> None:  # noqa: ANN001
    assert result.exit_code == 2, result.output
    assert "refusing to write" in result.output
    assert (target.read_bytes() if target.exists() else None) == before


@pytest.mark.parametrize("which", ["model", "plan", "index", "latest"])
def test_fix_never_writes_over_the_runs_inputs_or_its_ledger(run, which: str) -> None:
    runs, ledger, model, passes = run
    target = {"model": model, "plan": passes, "index": ledger / "index.json", "latest": runs / "latest"}[which]
    before = target.read_bytes()
    _refused(invoke("passes", "fix", str(ledger), "-o", str(target), "--no-check"), target, before)


@pytest.mark.parametrize("which", ["model", "plan", "report", "latest"])
def test_suggest_never_writes_over_its_inputs_or_a_ledger(run, which: str) -> None:
    runs, ledger, model, passes = run
    target = {"model": model, "plan": passes, "report": ledger / "report.html", "latest": runs / "latest"}[which]
    before = target.read_bytes() if target.exists() else None
    args = ["passes", "suggest", str(ledger), "-o", str(target), "--out", str(runs)]
    if which == "plan":
        args += ["--from", str(passes)]
    _refused(invoke(*args), target, before)


def test_suggest_of_a_model_script_never_writes_over_it(run) -> None:
    runs, _, model, _ = run
    before = model.read_bytes()
    _refused(invoke("passes", "suggest", str(model), "-o", str(model), "--out", str(runs)), model, before)


def test_a_fifo_is_refused_at_once_not_opened(run, tmp_path: Path) -> None:
    runs, ledger, _, _ = run
    fifo = tmp_path / "out.yaml"
    os.mkfifo(fifo)
    done: list[int] = []
    worker = threading.Thread(target=lambda: done.append(invoke("passes", "suggest", str(ledger), "-o", str(fifo),
                                                                "--out", str(runs)).exit_code), daemon=True)
    worker.start()
    worker.join(60)
    if not done:  # unblock the writer so the test process can end
        with open(fifo, "rb") as f:
            f.read()
    assert done == [2]


@pytest.mark.parametrize("path", ["/dev/null"])
def test_a_device_is_refused(path: str) -> None:
    with pytest.raises(AirctlError, match="character device"):
        claim_output(path)


def test_an_ordinary_file_is_still_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "plan.yaml"
    out.write_text("old")
    assert claim_output(out, [tmp_path / "model.py"]) == out

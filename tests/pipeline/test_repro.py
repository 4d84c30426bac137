"""``airctl repro`` (issue #16, acceptance 3): the folder, copied elsewhere, fails the same way with bash run.sh.

Slow: each test compiles the model a few times in-process, and run.sh starts airctl once more (forked
from the tests' warm process: the product's client, airctl/pipeline/warm/client.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from tests.conftest import REPO
from tests.warm_process import WarmProcess

MODELS = REPO / "fixtures" / "models"
PASSES = REPO / "fixtures" / "passes"
pytestmark = pytest.mark.slow


def failing_run(tmp_path: Path, model: str, passes: str, mode: str) -> Path:
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    result = compile_model(CompileRequest.of(MODELS / model, mode=mode, out_dir=tmp_path / "runs",
                                          passes_file=str(PASSES / passes), report=False))
    return result.ledger_dir


def repro_json(*args: object) -> dict:
    r = CliRunner().invoke(build_app(), ["repro", *map(str, args), "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def run_sh(folder: Path, elsewhere: Path, warm_process: WarmProcess) -> subprocess.CompletedProcess:
    """``bash run.sh`` of a copy of ``folder``; the ``airctl`` it runs is forked from the warm process
    (the product's client, airctl/pipeline/warm/client.py), a process of its own as a fresh one is.
    ``PYTHON``: the Python whose
    packages run.sh checks first (it would take it from ``AIRCTL`` when that is ``PY -m airctl``)."""
    copy = shutil.copytree(folder, elsewhere)
    env = {**os.environ, "AIRCTL": warm_process.shell_command(), "PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(["bash", str(Path(copy) / "run.sh")], cwd=elsewhere.parent, env=env, capture_output=True,
                          text=True, timeout=600)


def test_wrong_numbers_travel_as_the_script_and_run_sh_exits_3(tmp_path: Path, warm_process: WarmProcess) -> None:
    ledger = failing_run(tmp_path, "blocks.py", "bisect_numbers.yaml", "max-autotune")
    data = repro_json(ledger, "-o", tmp_path / "repro")
    folder = Path(data["folder"])
    assert (data["form"], data["bad"], data["reproduces"]) == ("script", "numerics", True)
    assert {"model.py", "original_model.py", "inputs.safetensors", "weights.safetensors", "passes.yaml",
            "plugins/plugins.py", "run.sh", "versions.json", "README.md"} <= {
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    assert not [p for p in folder.rglob("*") if p.suffix in (".pt", ".pth", ".pkl", ".pickle", ".bin")]
    from safetensors.torch import load_file

    from airctl.pipeline.run.model_script import load_model_script
    from airctl.sim.session import SimContext, session

    with session(SimContext(run_ge=lambda gm, args, name: gm(*args))):
        original = load_model_script(MODELS / "blocks.py").inputs[0]
    assert load_file(str(folder / "inputs.safetensors"))["input.0"].equal(original)
    versions = json.loads((folder / "versions.json").read_text())
    assert {"torch", "torch_npu", "torchair", "cann", "airctl"} <= set(versions)
    machine = [str(REPO), sys.prefix, str(tmp_path), str(Path.home())]  # shared bundles hold none (issue 47)
    for name in ("versions.json", "passes.yaml", "README.md", "run.sh"):
        text = (folder / name).read_text()
        assert not [p for p in machine if p in text], (name, text[:2000])
    modes = {p.name: p.stat().st_mode & 0o777 for p in folder.rglob("*") if p.is_file()}
    assert modes["inputs.safetensors"] == modes["model.py"] == modes["README.md"], modes  # one mode (issue 33)
    assert modes["run.sh"] & 0o111
    proc = run_sh(folder, tmp_path / "elsewhere" / "repro", warm_process)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "compiled outputs differ from eager PyTorch" in proc.stderr
    # a reproducer that does not fail the way asked is refused, and leaves no folder (issue 33)
    r = CliRunner().invoke(build_app(), ["repro", str(ledger), "--bad", "race", "-o", str(tmp_path / "refused")])
    assert r.exit_code == 2 and "does not fail here" in r.stderr, r.output
    assert not (tmp_path / "refused").exists() and not list(tmp_path.glob(".refused*"))


def test_minify_leaves_a_few_nodes_of_the_race_and_still_fails_elsewhere(tmp_path: Path,
                                                                        warm_process: WarmProcess) -> None:
    ledger = failing_run(tmp_path, "seed.py", "racy_no_wait.yaml", "reduce-overhead")
    data = repro_json(ledger, "-o", tmp_path / "repro", "--minify")
    assert (data["form"], data["bad"], data["reproduces"]) == ("graph", "race", True)
    minify = data["minify"]
    assert minify["nodes_before"] == 4 and minify["nodes_after"] <= 3
    assert {"mm", "abs_"} <= set(minify["kept"])  # the pass's range: mm..abs on stream_1
    model = (Path(data["folder"]) / "model.py").read_text()
    assert model.count(" = self._in(") + model.count(" = torch.") + model.count(" = operator.") == \
        minify["nodes_after"]
    readme = (Path(data["folder"]) / "README.md").read_text()
    assert str(tmp_path) not in readme and str(REPO) not in readme and "site-packages" not in readme  # issue 32
    assert "model.py:" in readme  # the why's source line, relative to the folder
    proc = run_sh(Path(data["folder"]), tmp_path / "elsewhere" / "repro", warm_process)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "--fail-on race: sub" in proc.stderr or "--fail-on race: add" in proc.stderr

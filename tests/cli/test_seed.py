"""``--seed N``, the option every compiling command honours: compile, passes apply, profile, run, each
bisect step and each rank (and repro, which compiles a run again with its recorded seed). It is
declared once (cli/target.EveryMode) and travels in the request's Target; a probe model writes the
first number it draws, so each test sees the seed take effect, and index.json records it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from tests.conftest import REPO

SEED = 7
PROBE_ENV = "AIRCTL_TEST_SEED_PROBE"
MODEL = '''import os

import torch


class Model(torch.nn.Module):
    def forward(self, x):
        mm = torch.mm(x, x)
        abs_ = torch.abs(mm)
        add = torch.add(abs_, 1)
        sub = torch.sub(x, mm)
        return add, sub


def get_model():
    with open(os.environ["AIRCTL_TEST_SEED_PROBE"], "a") as probe:  # the first number drawn after the seed
        probe.write(f"{torch.rand(1).item()!r}\\n")
    return Model().npu()


def get_inputs():
    return (torch.randn([3, 3]).npu(),)
'''
SCRIPT = '''import os

import torch

with open(os.environ["AIRCTL_TEST_SEED_PROBE"], "a") as probe:
    probe.write(f"{torch.rand(1).item()!r}\\n")
'''


def _first_draw(seed: int) -> float:
    import torch

    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        return torch.rand(1).item()
    finally:
        torch.random.set_rng_state(state)


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "probe.txt"
    monkeypatch.setenv(PROBE_ENV, str(path))
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    (tmp_path / "script.py").write_text(SCRIPT, encoding="utf-8")
    return path


def _drawn(probe: Path) -> list[float]:
    return [float(line) for line in probe.read_text(encoding="utf-8").split()]


def _index(folder: Path) -> dict:
    (found,) = [p for p in folder.rglob("index.json") if "ranks" not in p.parts]
    return json.loads(found.read_text(encoding="utf-8"))


def _invoke(*args: str) -> object:
    return CliRunner().invoke(build_app(), list(args))


@pytest.mark.slow
def test_compile_seeds_the_model_the_eager_reference_and_the_compiled_run(
        tmp_path: Path, probe: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import airctl.pipeline.compile.compiler as compiler

    seeded: list[int | None] = []
    real = compiler.seed_all
    monkeypatch.setattr(compiler, "seed_all", lambda seed: (seeded.append(seed), real(seed)))
    runs = tmp_path / "runs"
    r = _invoke("compile", str(tmp_path / "model.py"), "--backend", "sim", "--seed", str(SEED), "--out", str(runs))
    assert r.exit_code == 0, r.output
    assert seeded == [SEED] * 3  # before the script loads, before the eager reference, before the compiled run
    assert _drawn(probe) == [_first_draw(SEED)]
    assert _index(runs)["seed"] == SEED


@pytest.mark.slow
def test_without_seed_nothing_is_seeded_and_nothing_recorded(tmp_path: Path, probe: Path) -> None:
    runs = tmp_path / "runs"
    r = _invoke("compile", str(tmp_path / "model.py"), "--backend", "sim", "--capture", "minimal",
                "--out", str(runs))
    assert r.exit_code == 0, r.output
    assert "seed" not in _index(runs)


@pytest.mark.slow
def test_passes_apply_honours_seed(tmp_path: Path, probe: Path) -> None:
    runs = tmp_path / "runs"
    r = _invoke("passes", "apply", str(REPO / "passes" / "stream.yaml"), "--model", str(tmp_path / "model.py"),
                "--plan", "--backend", "sim", "--seed", str(SEED), "--out", str(runs))
    assert r.exit_code == 0, r.output
    assert _drawn(probe) == [_first_draw(SEED)] and _index(runs)["seed"] == SEED


@pytest.mark.slow
def test_profile_honours_seed(tmp_path: Path, probe: Path) -> None:
    runs = tmp_path / "runs"
    r = _invoke("profile", str(tmp_path / "model.py"), "--steps", "1", "--warmup", "0", "--backend", "sim",
                "--seed", str(SEED), "--out", str(runs))
    assert r.exit_code == 0, r.output
    assert _drawn(probe) == [_first_draw(SEED)] and _index(runs)["seed"] == SEED


@pytest.mark.slow
def test_run_seeds_the_script(tmp_path: Path, probe: Path) -> None:
    runs = tmp_path / "runs"
    r = _invoke("run", "--backend", "sim", "--seed", str(SEED), "--out", str(runs), str(tmp_path / "script.py"))
    assert r.exit_code == 0, r.output
    assert _drawn(probe) == [_first_draw(SEED)] and _index(runs)["seed"] == SEED


@pytest.mark.slow
def test_each_bisect_step_compiles_with_the_seed(tmp_path: Path, probe: Path) -> None:
    runs = tmp_path / "runs"
    r = _invoke("bisect", str(tmp_path / "model.py"), "--bad-if", "status == 'ok'", "--max-compiles", "1",
                "--backend", "sim", "--seed", str(SEED), "--out", str(runs))
    assert r.exit_code == 2 and "--max-compiles" in r.output, r.output  # stopped after its first step
    assert _drawn(probe) == [_first_draw(SEED)] and _index(runs)["seed"] == SEED


@pytest.mark.parametrize("args", [["compile", "{model}", "--nproc", "2"],
                                  ["run", "torchrun", "--nproc-per-node", "2", "{script}"]])
def test_the_seed_reaches_every_rank(tmp_path: Path, probe: Path, monkeypatch: pytest.MonkeyPatch,
                                     args: list[str]) -> None:
    """The launcher is replaced by one that records its request; the request goes to the ranks as JSON."""
    from airctl.errors import AirctlError
    from airctl.pipeline.ranks import launch
    from airctl.pipeline.ranks.worker import RankRequest

    asked: list[launch.RanksRequest] = []

    def run_ranks(req: launch.RanksRequest, progress: object = None) -> launch.RanksResult:
        asked.append(req)
        raise AirctlError("recorded")

    monkeypatch.setattr(launch, "run_ranks", run_ranks)
    line = [a.format(model=tmp_path / "model.py", script=tmp_path / "script.py") for a in args]
    at = 1 if line[0] == "run" else len(line)  # run's options go before the script
    r = _invoke(*line[:at], "--seed", str(SEED), "--backend", "sim", "--out", str(tmp_path / "runs"), *line[at:])
    assert "recorded" in r.output and len(asked) == 1, r.output
    rank = asked[0].rank
    (tmp_path / "request.json").write_text(json.dumps(rank.to_json()), encoding="utf-8")
    read = RankRequest.read(tmp_path / "request.json")  # what every rank reads back
    assert read.target == rank.target and read.target.seed == SEED


def test_repro_compiles_the_run_again_with_its_seed(tmp_path: Path, probe: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A reproducer keeps the inputs and weights of a second compile: drawn as the run drew them."""
    import airctl.pipeline.compile.compiler as compiler
    from airctl.ledger.writer import LedgerWriter
    from airctl.pipeline.bisect.repro import ReproError, ReproRequest, repro

    run = LedgerWriter.create_at(tmp_path / "run", command="compile", mode="max-autotune", seed=SEED,
                                 model={"path": str(tmp_path / "model.py")})
    run.finish("failed")
    asked: list = []

    def record(req: object, progress: object = None) -> object:
        asked.append(req.target)  # type: ignore[attr-defined]
        raise ReproError("recorded")

    monkeypatch.setattr(compiler, "compile_model", record)
    with pytest.raises(ReproError, match="recorded"):
        repro(ReproRequest(tmp_path / "run", out=tmp_path / "repro"))
    assert [t.seed for t in asked] == [SEED]


def test_profile_times_compiles_the_model_with_the_seed(tmp_path: Path, probe: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``profile MODEL.py --times``: the prediction reads the graphs of a compile of the same Target."""
    import airctl.pipeline.compile.compiler as compiler
    from airctl.errors import AirctlError

    asked: list = []

    def record(req: object, progress: object = None) -> object:
        asked.append(req.target)  # type: ignore[attr-defined]
        raise AirctlError("recorded")

    monkeypatch.setattr(compiler, "compile_model", record)
    r = _invoke("profile", str(tmp_path / "model.py"), "--times", "estimate", "--seed", str(SEED), "--backend", "sim",
                "--out", str(tmp_path / "runs"))
    assert "recorded" in r.output and [t.seed for t in asked] == [SEED], r.output

"""Rules R16-R21 in real runs: the sweep over the shipped pass files and models with their plans, and the
corrected twins of the rules' fixtures: no finding of the new rules on a correct plan. (That each rule's
model script and pass file fires, with one count in compile, passes apply, profile, check and show:
tests/verify/test_capture_agree.py.)

Each test compiles models through TorchAir under sim (seconds each): marked slow."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from airctl.verify.capture_catalogue import CAPTURE_RULES
from tests.conftest import MODELS, REPO
from tests.verify.capture_cli import CAPTURE, airctl

NEW = {r.id for r in CAPTURE_RULES}


def _index() -> dict:
    from airctl.ledger.runs import latest_run

    return json.loads((latest_run(Path("airctl-runs")) / "index.json").read_text())


def _run_rules(index: dict) -> set[str]:
    """The rules of the run's verdict (the final graph's findings, not fixed or other-mode ones)."""
    return {f["rule"] for f in index.get("findings") or [] if not f.get("fixed_by") and not f.get("other_mode")}


def _check_rules() -> tuple[int, set[str]]:
    r = airctl("check", "--json")
    return r.exit_code, {f["rule"] for f in json.loads(r.output)["findings"]}


# the shipped pass files with the model each is written for, in the modes they run in
SHIPPED = [
    (MODELS / "seed.py", REPO / "passes" / "stream.yaml", ("max-autotune",)),
    (MODELS / "two_chains.py", REPO / "passes" / "two_chains.yaml", ("max-autotune", "reduce-overhead")),
    (MODELS / "transformer.py", REPO / "passes" / "transformer_two_streams.yaml", ("reduce-overhead", "npugraph_ex")),
    (MODELS / "seed.py", REPO / "passes" / "python_plugin.yaml", ("npugraph_ex",)),
    (MODELS / "experts.py", CAPTURE / "passes" / "experts_core_limits_ok.yaml", ("npugraph_ex",)),
    (MODELS / "transformers" / "qwen3.py", REPO / "fixtures" / "passes" / "qwen3_mlp_stream.yaml",
     ("reduce-overhead",)),
    (CAPTURE / "models" / "kv_cache_write.py", CAPTURE / "passes" / "kv_write_wait_ok.yaml",
     ("reduce-overhead", "npugraph_ex")),  # R18's corrected twin
]  # not swept: passes/comm_stream.yaml, a multi-rank plan (--nproc 2)
# the suite's cases: each mode, a plugin pass and the twins of R18 and R20; the others are sweeps (--sweeps)
IN_THE_SUITE = {("stream.yaml", "max-autotune"), ("two_chains.yaml", "reduce-overhead"),
                ("python_plugin.yaml", "npugraph_ex"), ("experts_core_limits_ok.yaml", "npugraph_ex"),
                ("kv_write_wait_ok.yaml", "npugraph_ex")}
PLANS = [(model, passes, mode) if (passes.name, mode) in IN_THE_SUITE else
         pytest.param(model, passes, mode, marks=pytest.mark.sweep)
         for model, passes, modes in SHIPPED for mode in modes]


@pytest.mark.slow
@pytest.mark.parametrize(("model", "passes", "mode"), PLANS, ids=lambda v: getattr(v, "stem", v))
def test_sweep_no_new_finding_on_the_shipped_pass_files(workdir: Path, model: Path, passes: Path, mode: str) -> None:
    """No finding of the new rules on a shipped pass file compiled in a mode it runs in (no false positive)."""
    if "transformers" in model.parts and importlib.util.find_spec("transformers") is None:
        pytest.skip("transformers is not installed")
    r = airctl("compile", model, "--mode", mode, "--passes", passes)
    assert r.exit_code == 0, r.output
    found = _run_rules(_index()) | _check_rules()[1]
    assert found & NEW == set(), (passes.name, mode, found & NEW)


SWEPT_MODELS = sorted(p for p in MODELS.glob("*.py") if "def get_model" in p.read_text())
# the suite's cases: a model of each kind the rules read (layers of attention and MLP, collectives, two graphs,
# recaptured shapes, custom ops, an op npugraph_ex reinplaces); every other shipped model is a sweep (--sweeps)
MODELS_IN_THE_SUITE = {"transformer", "ddp_overlap", "graph_break", "changing_shapes", "custom_ops",
                       "reinplace_overlap"}


@pytest.mark.slow
@pytest.mark.parametrize("model", [p if p.stem in MODELS_IN_THE_SUITE else pytest.param(p, marks=pytest.mark.sweep)
                                   for p in SWEPT_MODELS], ids=lambda p: p.stem)
def test_sweep_no_new_finding_on_the_shipped_models(workdir: Path, model: Path) -> None:
    """Every shipped model compiled as npugraph_ex captures it (the mode all six rules apply in): the
    new rules find nothing in the run's verdict or in `check` (whatever else the run says)."""
    airctl("compile", model, "--mode", "npugraph_ex")
    if not (Path("airctl-runs")).is_dir():
        pytest.fail("no run was written")
    found = _run_rules(_index()) | _check_rules()[1]
    assert found & NEW == set()

"""Incremental apply against full apply, compiled (slow): the ledgers are equal in every mode, on the
Llama fixture and a transformers model, and every change of the key compiles in full (issue 61).

Each case compiles twice in this process, each as a fresh process would
(:func:`tests.pipeline.incremental_ledgers.compile_fresh`): a full apply (it keeps the pre-pass
graph), then the same apply started from it; the second must say it was incremental and from which
run, and its ledger must be the first's (:func:`~tests.pipeline.incremental_ledgers.compared`).
The install's digest is fixed for these compiles: other files of the checkout may be edited while
the suite runs, and the digest itself is tested without compiling (test_incremental.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import MODELS, REPO
from tests.pipeline.incremental_ledgers import compared, compile_fresh
from tests.pipeline.test_npugraph_ex import _torchair_compiles_after_this_module  # noqa: F401 - npugraph_ex last

pytestmark = pytest.mark.slow

MODES = ["max-autotune", "reduce-overhead", "npugraph_ex"]  # npugraph_ex last: see the fixture imported above
SCOPES = {"llama": ("layers.*.mlp", "layers.*"),
          "transformers/bert": ("encoder.layer.*.intermediate", "encoder.layer.*"),
          "ddp_overlap": ("layers.*.up", "layers.*")}  # collectives: their ops' packets in source_fn_stack
TINY = '''import os

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.lin(torch.mm(x, x))) + {bias}


def get_model():
    torch.manual_seed(0)
    return Model().eval()


def get_inputs():
    torch.manual_seed(int(os.environ.get("AIRCTL_TEST_INCREMENTAL_SEED", "0")))
    return (torch.randn(4, 4),)
'''


@pytest.fixture(autouse=True)
def _one_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("airctl.pipeline.warm.place.install", lambda env: "the-install")
    monkeypatch.delenv("AIRCTL_INCREMENTAL", raising=False)


def _scope(path: Path, model: str) -> Path:
    select, each = SCOPES[model]
    path.write_text(f"version: 1\npasses:\n  - name: side\n    kind: stream_scope\n    stream: '1'\n"
                    f"    select: {{module: {select}}}\n    each: {each}\n", encoding="utf-8")
    return path


# -- every change of the key compiles in full ------------------------------------------------------
@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tiny model and a folder with one full compile of it that kept its graph."""
    folder = tmp_path_factory.mktemp("incremental-kept")
    model = folder / "tiny.py"
    model.write_text(TINY.format(bias=1), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("airctl.pipeline.warm.place.install", lambda env: "the-install")
        result = compile_fresh(model, folder / "runs", True)
    assert result.error is None and (result.ledger_dir / "incremental" / "pre_pass.json.gz").is_file()
    return model, folder / "runs"


def _again(kept: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], **settings) -> tuple:
    model, runs = kept
    copy = tmp_path / "work"
    shutil.copytree(model.parent, copy)
    result = compile_fresh(copy / model.name, copy / runs.name, True, verbose=True, **settings)
    assert result.error is None
    return result, capsys.readouterr().err


def test_the_same_model_inputs_and_options_start_from_the_kept_graph(kept, tmp_path, capsys) -> None:
    result, err = _again(kept, tmp_path, capsys)
    assert result.index.incremental is not None and "Dynamo and AOT skipped" in err, err


def test_an_edit_of_the_model_compiles_in_full(kept, tmp_path, capsys) -> None:
    model, _ = kept
    (tmp_path / "work").mkdir()
    shutil.copytree(model.parent, tmp_path / "work", dirs_exist_ok=True)
    (tmp_path / "work" / model.name).write_text(TINY.format(bias=2), encoding="utf-8")
    result = compile_fresh(tmp_path / "work" / model.name, tmp_path / "work" / "runs", True, verbose=True)
    err = capsys.readouterr().err
    assert result.index.incremental is None and "the model script changed" in err


def test_other_inputs_compile_in_full(kept, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("AIRCTL_TEST_INCREMENTAL_SEED", "1")
    result, err = _again(kept, tmp_path, capsys)
    assert result.index.incremental is None and "the inputs changed" in err


def test_another_option_compiles_in_full(kept, tmp_path, capsys) -> None:
    result, err = _again(kept, tmp_path, capsys, options={"ge_config.multistream_parallel_mode": "LoadBalance:2"})
    assert result.index.incremental is None and "the options changed" in err


@pytest.mark.parametrize("package", ["torch", "torch_npu"])
def test_another_torch_or_torchair_version_compiles_in_full(kept, tmp_path, capsys, monkeypatch, package) -> None:
    import torch

    from airctl.pipeline.incremental import key

    if package == "torch":
        monkeypatch.setattr(torch, "__version__", "2.99.0+cpu")
    else:
        real = key._version
        monkeypatch.setattr(key, "_version", lambda dist: "9.9.9" if dist.startswith("torch") else real(dist))
    result, err = _again(kept, tmp_path, capsys)
    words = {"torch": "the torch version changed", "torch_npu": "the torch-npu (TorchAir) version changed"}
    assert result.index.incremental is None and words[package] in err


def test_a_kept_graph_that_does_not_check_out_compiles_in_full(kept, tmp_path, capsys) -> None:
    from airctl.io.compressed import gzip_bytes, read_bytes

    model, runs = kept
    copy = tmp_path / "work"
    shutil.copytree(model.parent, copy)
    (path,) = (copy / runs.name).glob("*/incremental/pre_pass.json.gz")
    data = json.loads(read_bytes(path))
    node = next(n for n in data["graph"]["nodes"] if n["op"] == "call_function")
    node["meta"]["val_check"][0] = [5, 5]  # a shape the graph does not propagate to
    path.write_bytes(gzip_bytes(json.dumps(data)))
    result = compile_fresh(copy / model.name, copy / runs.name, True, verbose=True)
    err = capsys.readouterr().err
    assert result.error is None and result.index.incremental is None
    assert "kept graph does not check out: node" in err and "fake-tensor propagation gave" in err


def test_incremental_off_compiles_in_full_and_keeps_nothing(kept, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("AIRCTL_INCREMENTAL", "0")
    result, _ = _again(kept, tmp_path, capsys)
    assert result.index.incremental is None and not (result.ledger_dir / "incremental").exists()


# -- a pass that fails, a pass that changes the results, --plan: the same ledger too -----------------
@pytest.mark.parametrize(("passes", "plan"), [("fixtures/passes/raising_plugin.yaml", False),
                                              ("fixtures/passes/add_to_sub.yaml", False), ("passes/stream.yaml", True)])
def test_an_incremental_apply_fails_and_plans_as_the_full_apply(tmp_path: Path, passes: str, plan: bool) -> None:
    import sys

    from airctl.pipeline.apply import apply_passes
    from airctl.pipeline.target import Target

    def apply(yaml: Path, incremental: bool, plan: bool = False):
        for name in ("torchair.npu_fx_compiler", "npugraph_ex.npu_fx_compiler"):  # as in a fresh process
            if (module := sys.modules.get(name)) is not None:
                module._GLOBAL_GRAPH_ID = 0
        target = Target(MODELS / "seed.py", backend="sim", passes_file=yaml)
        return apply_passes(target, out=tmp_path / "runs", incremental=incremental, plan=plan)

    kept = apply(REPO / "passes" / "stream.yaml", True)
    assert kept.status == "ok"
    full, again = apply(REPO / passes, False, plan), apply(REPO / passes, True, plan)
    assert {k: again.index.incremental[k] for k in ("from", "skipped")} == \
        {"from": kept.ledger_dir.name, "skipped": ["dynamo", "aot"]}
    assert "eager" in again.index.incremental["reused"]  # the model's eager reference: the kept run's
    assert full.status == again.status == ("planned" if plan else "failed")
    assert compared(full.ledger_dir, again.ledger_dir) == []


def test_a_profile_always_compiles_in_full(tmp_path: Path) -> None:
    """What profile measures is each step's time: a compile started from the kept graph runs without
    Dynamo's frame around it, and under sim its steps were about 1.4x faster than a full compile's."""
    import sys

    from airctl.pipeline.profile import ProfileRequest, profile_model
    from airctl.pipeline.target import Target

    def profile():
        for name in ("torchair.npu_fx_compiler", "npugraph_ex.npu_fx_compiler"):  # as in a fresh process
            if (module := sys.modules.get(name)) is not None:
                module._GLOBAL_GRAPH_ID = 0
        target = Target(MODELS / "seed.py", backend="sim", passes_file=REPO / "passes" / "stream.yaml")
        return profile_model(ProfileRequest(target, steps=2, out_dir=tmp_path / "runs"))

    full, again = profile(), profile()
    assert "incremental" not in json.loads((again.ledger_dir / "index.json").read_text())
    assert (full.matches_eager, len(full.timelines), len(full.step_seconds)) == \
        (again.matches_eager, len(again.timelines), len(again.step_seconds))
    assert compared(full.ledger_dir, again.ledger_dir) == []


# -- equal ledgers, every mode (last in this file: npugraph_ex's compiles go last) --------------------
# every mode on the Llama fixture and BERT in reduce-overhead in the suite; BERT's other modes and the collectives
# model are sweeps (--sweeps)
@pytest.mark.parametrize(("mode", "model"), [
    (m, model) if model == "llama" or (m, model) == ("reduce-overhead", "transformers/bert")
    else pytest.param(m, model, marks=pytest.mark.sweep)
    for m in MODES for model in ("llama", "transformers/bert", "ddp_overlap")])
def test_an_incremental_apply_writes_the_full_applys_ledger(tmp_path: Path, model: str, mode: str) -> None:
    passes = _scope(tmp_path / "scope.yaml", model)
    settings = dict(mode=mode, passes_file=passes, command="passes apply")
    full = compile_fresh(MODELS / f"{model}.py", tmp_path / "runs", True, **settings)
    assert full.error is None and full.index.incremental is None
    assert (full.ledger_dir / "incremental" / "pre_pass.json.gz").is_file()
    again = compile_fresh(MODELS / f"{model}.py", tmp_path / "runs", True, **settings)
    assert again.error is None
    assert again.index.incremental == {"from": full.ledger_dir.name, "skipped": ["dynamo", "aot"],
                                       "reused": ["eager", "eager_check"]}
    assert not (again.ledger_dir / "incremental").exists()  # a replay keeps nothing of its own
    assert compared(full.ledger_dir, again.ledger_dir) == []

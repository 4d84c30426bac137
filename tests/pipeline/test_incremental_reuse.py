"""What an incremental apply reuses besides the graph, without compiling (issue 61): the eager
reference's outputs and the eager check's run of the first YAML pass's graph, kept as safetensors,
read back exactly, and reused only under their key — torch's threads, the graph, its inputs'
layouts and its constants; anything else runs again and ``-v`` says why. The compiled cases
(reused, and the ledger still the full apply's) are test_incremental_ledgers.py."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from airctl.instrument import PassRun
from airctl.instrument.eager_check import EagerCheck, Outcome, run_key
from airctl.pipeline.incremental import Incremental
from airctl.pipeline.incremental.graph_codec import Unsupported
from airctl.pipeline.incremental.keep import _write
from airctl.pipeline.incremental.replay import Found
from airctl.pipeline.incremental.reuse import REUSE, pack, pack_eager, threads, unpack_check, unpack_eager


def _read(data: bytes) -> dict[str, Any]:
    from safetensors.torch import load

    return load(data)


# -- kept and read back exactly ----------------------------------------------------------------------
def test_an_eager_output_comes_back_with_its_structure_layout_and_grad() -> None:
    import torch

    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    value = {"logits": base.t(), "extra": (torch.ones(2, requires_grad=True) * 2, None, 3, 0.5, "tag"),
             "mask": torch.tensor([True, False])}
    tensors: dict[str, Any] = {}
    described = pack_eager(value, tensors)
    back = unpack_eager(described, tensors)
    assert back["logits"].stride() == base.t().stride() and torch.equal(back["logits"], base.t())
    assert back["extra"][0].requires_grad and torch.equal(back["extra"][0].detach(), torch.full((2,), 2.0))
    assert back["extra"][1:] == (None, 3, 0.5, "tag") and back["mask"].dtype == torch.bool
    assert described["threads"] == threads()


def test_an_output_that_cannot_be_given_back_exactly_is_not_kept() -> None:
    import torch

    with pytest.raises(Unsupported, match="an output is a object"):
        pack_eager((torch.ones(1), object()), {})
    with pytest.raises(Unsupported, match="complex"):
        pack_eager(torch.ones(2, dtype=torch.complex64), {})


def test_a_part_that_did_not_run_or_cannot_be_kept_says_why_and_the_other_is_kept() -> None:
    import torch

    described, data = pack((torch.ones(3), object()), None)
    assert described == {"eager": {"why_not": "an output is a object"}, "eager_check": {"why_not": "it did not run"}}
    assert data is None
    check = SimpleNamespace(first=("k", Outcome([torch.zeros(2), 7])))
    described, data = pack(torch.ones(3), check)
    assert described["eager_check"]["key"] == "k" and data is not None
    key, outcome = unpack_check(described["eager_check"], _read(data))
    assert key == "k" and torch.equal(outcome.outputs[0], torch.zeros(2)) and outcome.outputs[1] == 7
    assert torch.equal(unpack_eager(described["eager"], _read(data)), torch.ones(3))


def test_a_part_too_large_to_write_at_every_full_compile_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from airctl.pipeline.incremental import reuse

    monkeypatch.setattr(reuse, "MAX_PART_BYTES", 12)  # 16 bytes of eager outputs, 12 of the check
    described, data = pack((torch.ones(2), torch.ones(2)), SimpleNamespace(first=("k", Outcome([torch.ones(3)]))))
    assert described["eager"] == {"why_not": "its tensors take over 0 MiB"} and described["eager_check"]["key"] == "k"
    assert set(_read(data)) == {"check.0"}


# -- the eager check's run: its key, and reuse under it only ------------------------------------------
def _graph(constant: float = 1.0) -> Any:
    import torch

    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c = torch.full((2,), constant)

        def forward(self, x: Any) -> Any:
            return torch.relu(x) + self.c

    return torch.fx.symbolic_trace(M())


def test_the_check_run_key_sees_the_graph_inputs_constants_and_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    gm, x = _graph(), torch.empty(2)
    k = run_key(gm, "fp", [x])
    assert k == run_key(_graph(), "fp", [torch.empty(2)])
    assert k != run_key(gm, "other fp", [x])
    assert k != run_key(gm, "fp", [torch.empty(3)]) != run_key(gm, "fp", [torch.empty(2, dtype=torch.float64)])
    assert k != run_key(_graph(2.0), "fp", [x])
    monkeypatch.setattr(torch, "get_num_threads", lambda: 97)
    assert k != run_key(gm, "fp", [x])
    assert run_key(gm, "fp", [object()]) is None


def _before(check: EagerCheck, gm: Any, inputs: list[Any]) -> Outcome:
    from airctl.io.fx_reader import fx_digest

    run = PassRun("1-inference", "yaml:p", "yaml:p", gm, "yaml", {"check_results": True, "example_inputs": inputs})
    run.fingerprint_before = fx_digest(gm)
    check.before_pass(run)
    return check._outcomes[run.fingerprint_before]


def test_the_eager_check_takes_a_given_run_only_under_its_key() -> None:
    import torch

    from airctl.io.fx_reader import fx_digest

    gm, inputs = _graph(), [torch.empty(2)]
    given = Outcome([torch.full((2,), 42.0)])
    check, used = EagerCheck(), []
    check.given, check.on_given = {run_key(gm, fx_digest(gm), inputs): given}, used.append
    assert _before(check, gm, inputs) is given and len(used) == 1
    other = EagerCheck()
    other.keep_first = True  # a full compile that keeps its graph holds its first run
    other.given = {run_key(_graph(2.0), fx_digest(gm), inputs): given}  # another constant: run, not taken
    ran = _before(other, gm, inputs)
    assert ran is not given and ran.outputs is not None and not torch.equal(ran.outputs[0], given.outputs[0])
    assert other.first is not None and other.first[1] is ran  # what a full compile keeps


# -- an incremental compile: reused from the kept run, or run again with the reason at -v --------------
def _found(tmp_path: Path, described: dict[str, Any], data: bytes | None) -> Found:
    run = tmp_path / "20261207-010000-m-aaaa"
    (run / "incremental").mkdir(parents=True, mode=0o700)
    if data is not None:
        _write(run / REUSE, data)
    return Found(run, {"reuse": described})


def test_the_eager_reference_is_reused_and_said_with_v(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    described, data = pack((torch.arange(3.0), 1), None)
    inc = Incremental(lambda _m: None, verbose=True)
    inc.found = _found(tmp_path, described, data)
    out = inc.reference(lambda: pytest.fail("the eager reference ran although it was kept"))
    assert torch.equal(out[0], torch.arange(3.0)) and out[1] == 1 and inc.reused == ["eager"]
    assert "the eager reference reused from 20261207-010000-m-aaaa" in capsys.readouterr().err


@pytest.mark.parametrize(("change", "why"), [
    ("threads", "torch's threads changed"), ("file", "is missing"), ("mode", "may be written by others"),
    ("none", "not kept (the kept run has none)")])
def test_a_kept_reference_that_does_not_fit_runs_again(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       change: str, why: str) -> None:
    import torch

    described, data = pack(torch.arange(3.0), None)
    if change == "threads":
        described["eager"]["threads"] = threads() + 1
    inc = Incremental(lambda _m: None, verbose=True)
    inc.found = _found(tmp_path, described if change != "none" else {}, data if change != "file" else None)
    if change == "mode":
        os.chmod(inc.found.run / REUSE, 0o666)
    assert inc.reference(lambda: "ran") == "ran" and inc.reused == []
    err = capsys.readouterr().err
    assert "the eager reference runs again" in err and why in err, err


def test_a_kept_check_run_no_pass_took_is_said_with_v(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    described, data = pack(None, SimpleNamespace(first=("another graph's key", Outcome([torch.ones(1)]))))
    inc = Incremental(lambda _m: None, verbose=True)
    inc.found = _found(tmp_path, described, data)
    check = EagerCheck()
    inc._give_check(SimpleNamespace(runner=SimpleNamespace(instruments=[check])))
    assert set(check.given) == {"another graph's key"}
    inc.after_run(None, None)  # no pass took it
    assert "the eager check's kept run was not used" in capsys.readouterr().err and inc.reused == []

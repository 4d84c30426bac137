"""`--capture minimal|default|full`: what each level keeps in the ledger (every level: every stage)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import MODELS, ledger_text

pytestmark = pytest.mark.slow


def _compile(out: Path, capture: str):
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    result = compile_model(CompileRequest.of(MODELS / "seed.py", out_dir=out, backend="sim", capture=capture))
    assert result.error is None, result.error
    return result


def test_minimal_keeps_stages_and_snapshots_only(tmp_path: Path, compile_fixture) -> None:
    from airctl.ledger.reader import Ledger

    minimal = _compile(tmp_path, "minimal")
    default = compile_fixture("seed", "max-autotune")
    names = [s.name for s in minimal.index.stages()]
    assert names == [s.name for s in default.index.stages()]  # the same stages, every pass
    led = Ledger.open(minimal.ledger_dir)
    assert all(len(led.load(s)) == s.entry.nodes for s in led.stages())
    assert all(s.text is None for s in led.stages())
    assert minimal.index.dumps == [] and not list((minimal.ledger_dir / "torchair").iterdir())
    assert minimal.index.report is None and not (minimal.ledger_dir / "report.html").exists()
    assert " DEBUG " not in ledger_text(minimal.ledger_dir / minimal.index.log)
    # default: texts, TorchAir's txt/py dumps (+ its pbtxt of the optimized GE graph), report, DEBUG log without
    # TorchAir's per-node trace
    assert all(s.text for s in default.index.stages() if s.entry.changed is not False)
    assert sorted((d.type, d.stage) for d in default.index.dumps) == [
        ("pbtxt", "ge-optimized"), ("py", "ge-optimized"), ("py", "ge-original"), ("txt", "ge-optimized"),
        ("txt", "ge-original")]
    assert default.index.report == "report.html" and default.index.log == "log.txt.gz"
    log = ledger_text(default.ledger_dir / default.index.log)
    assert " DEBUG " in log and "target: aten.mm.default" not in log
    assert "already exists and does not need to be automatically generated" not in log  # once per node
    # the trace is skipped at TorchAir's logger (no record made); every other line keeps its own file:line
    assert " DEBUG torchair [npu_fx_compiler.py:" in log and "[logs.py:" not in log


def test_full_adds_pbtxt_and_torchairs_node_trace(tmp_path: Path) -> None:
    full = _compile(tmp_path, "full")
    assert {d.type for d in full.index.dumps} == {"pbtxt", "txt", "py"}
    log = ledger_text(full.ledger_dir / full.index.log)
    assert "target: aten.mm.default" in log  # TorchAir's converter traces every node at DEBUG
    assert "The converter for the Ascend operator aten.mm.default already exists" in log


def test_an_unknown_capture_level_is_refused(tmp_path: Path) -> None:
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    result = compile_model(CompileRequest.of(MODELS / "seed.py", out_dir=tmp_path, backend="sim", capture="most"))
    assert result.error is not None and "invalid --capture 'most'" in result.error.message
    assert "minimal, default, full" in result.error.hint

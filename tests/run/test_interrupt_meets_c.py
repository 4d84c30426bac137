"""Interrupts that first meet code where an exception cannot travel as usual: Python run by C from a
string (CPython kept it as unhandled), and a fake kernel torch's C++ calls while Dynamo traces (the
process aborted). Each ends the run interrupted, 130, as at any other moment (docs/reliability.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.run.test_lifecycle import ENDS, _run, _statuses
from tests.warm_process import WarmProcess


def test_an_interrupt_that_met_c_code_running_a_string_still_exits_130(tmp_path: Path,
                                                                       warm_process: WarmProcess) -> None:
    """The second known defect's cause (docs/reliability.md): CPython remembered an interrupt raised in
    code C ran from a string as unhandled, so ``python -m airctl`` died by SIGINT (-2) after it had
    ended the run ``interrupted`` and said so."""
    out = tmp_path / "runs"
    proc = _run(warm_process, ["compile", ENDS / "interrupt_in_c_string.py"], tmp_path, out)
    assert proc.returncode == 130, (proc.returncode, proc.stderr[-2000:])
    assert _statuses(out) == ["interrupted"] and "error: interrupted" in proc.stderr
    [ledger] = [p for p in out.iterdir() if (p / "index.json").is_file()]
    assert "the run's ledger" in proc.stderr and ledger.name in proc.stderr  # where to look, named


# Dynamo's trace is the same in both modes: reduce-overhead's case is a sweep (--sweeps)
@pytest.mark.parametrize("mode", ["max-autotune", pytest.param("reduce-overhead", marks=pytest.mark.sweep)])
def test_an_interrupt_inside_a_fake_kernel_is_raised_at_dynamos_next_step(tmp_path: Path, mode: str,
                                                                          warm_process: WarmProcess) -> None:
    """The known abort's cause, made deterministic: SIGINT lands in Python code torch's C++ runs (a fake
    kernel, during Dynamo's trace). It is held until Dynamo's next step (airctl/hooks/compile_signals.py):
    the kernel runs to its end (its file is there), and the run ends interrupted, 130, as anywhere else."""
    out = tmp_path / "runs"
    proc = _run(warm_process, ["compile", ENDS / "interrupt_in_a_fake_kernel.py", "--mode", mode], tmp_path, out)
    assert proc.returncode == 130, (proc.returncode, proc.stderr[-2000:])
    assert _statuses(out) == ["interrupted"] and "error: interrupted" in proc.stderr
    assert (tmp_path / "went-on.txt").is_file(), "the interrupt was raised inside the fake kernel"
    assert "the compile stops at its next safe point" in proc.stderr
    assert "Traceback" not in proc.stderr

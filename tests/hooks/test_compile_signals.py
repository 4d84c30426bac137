"""Signals held during Dynamo's frame compiles (airctl/hooks/compile_signals.py): the first waits for a
safe point, a second is raised at once, nothing stays replaced; and in a real compile the first is
raised at Dynamo's next step."""

from __future__ import annotations

import importlib.util
import signal
import threading
from pathlib import Path

import pytest
import torch

from airctl import signal_guard
from airctl.hooks import compile_signals
from airctl.hooks.patching import Patches

KERNEL = Path(__file__).resolve().parents[2] / "fixtures" / "models" / "ends" / "interrupt_in_a_fake_kernel.py"


class Stop(BaseException):  # as KeyboardInterrupt: Dynamo wraps an Exception in its own error
    pass


def _raising(signum: int, frame: object) -> None:
    raise Stop(signum)


@pytest.fixture
def sigterm_raises():
    before = signal.signal(signal.SIGTERM, _raising)
    yield
    signal.signal(signal.SIGTERM, before)


def test_the_first_signal_waits_for_the_safe_point_and_the_handler_is_back(sigterm_raises: None) -> None:
    holder = compile_signals.compile_holder()
    holder.enter()
    went_on = []
    signal.raise_signal(signal.SIGTERM)
    went_on.append("after the signal")  # recorded, not raised
    assert holder.got == [signal.SIGTERM]
    with pytest.raises(Stop):
        holder.deliver()
    assert went_on == ["after the signal"] and holder.got == []
    holder.leave()
    assert signal.getsignal(signal.SIGTERM) is _raising


def test_a_second_signal_is_raised_at_once(sigterm_raises: None) -> None:
    holder = compile_signals.compile_holder()
    holder.enter()
    signal.raise_signal(signal.SIGTERM)
    with pytest.raises(Stop):
        signal.raise_signal(signal.SIGTERM)
    holder.leave()  # nothing left to deliver
    assert signal.getsignal(signal.SIGTERM) is _raising


def test_nested_compiles_deliver_when_the_outer_one_ends(sigterm_raises: None) -> None:
    holder = compile_signals.compile_holder()
    holder.enter()
    holder.enter()
    signal.raise_signal(signal.SIGTERM)
    holder.leave()  # the inner frame compile: still held
    assert holder.got == [signal.SIGTERM]
    with pytest.raises(Stop):
        holder.leave()
    assert signal.getsignal(signal.SIGTERM) is _raising


def test_other_threads_neither_hold_nor_take_the_main_threads_signal(sigterm_raises: None) -> None:
    """A compile in another thread while the main one holds a signal: not held again there, and its
    safe points leave the signal to the main thread (Python runs handlers nowhere else)."""
    holder = compile_signals.compile_holder()
    holder.enter()
    signal.raise_signal(signal.SIGTERM)
    results = []

    def worker() -> None:
        results.append(compile_signals._holding(lambda: "compiled", holder)())
        results.append(compile_signals._checked(lambda: "stepped", holder)())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert results == ["compiled", "stepped"] and holder.got == [signal.SIGTERM]
    with pytest.raises(Stop):
        holder.leave()
    assert signal.getsignal(signal.SIGTERM) is _raising


def test_a_handler_raising_inside_a_swap_does_not_leave_it_half_done(sigterm_raises: None,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """CPython runs pending handlers inside ``signal.signal``: one that raises there must not leave a
    signal with the recorder installed and nothing to deliver it."""
    install, failed = signal.signal, []

    def signal_once_interrupted(signum: int, handler: object) -> object:
        if not failed:
            failed.append(signum)
            raise Stop(signum)  # as a pending SIGTERM's handler would, before the call installs anything
        return install(signum, handler)

    holder = compile_signals.compile_holder()
    monkeypatch.setattr(signal, "signal", signal_once_interrupted)
    with pytest.raises(Stop):
        holder.enter()
    monkeypatch.setattr(signal, "signal", install)
    assert all(signal.getsignal(s) == holder.record for s in holder.saved)  # every swap done
    holder.leave()
    assert signal.getsignal(signal.SIGTERM) is _raising


def test_in_a_compile_the_signal_is_raised_at_dynamos_next_step(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture's fake kernel (Python torch's C++ calls while Dynamo traces) sends SIGINT: the kernel
    runs to its end, and the step wrapper raises it once the kernel returned."""
    monkeypatch.chdir(tmp_path)
    spec = importlib.util.spec_from_file_location("interrupt_in_a_fake_kernel", KERNEL)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    before = signal.signal(signal.SIGINT, _raising)
    torch._dynamo.reset()
    try:
        with Patches() as p:
            compile_signals.patch(p)
            compiled = torch.compile(script.get_model(), backend="eager")
            with pytest.raises(Stop) as raised:
                compiled(*script.get_inputs())
        assert signal.getsignal(signal.SIGINT) is _raising
    finally:
        signal.signal(signal.SIGINT, before)
        torch._dynamo.reset()
    assert (tmp_path / "went-on.txt").is_file()  # the kernel ran to its end
    names = [entry.name for entry in raised.traceback]
    assert names[-3:] == ["checked", "deliver", "_raising"]  # at a safe point, not in the kernel


def test_released_code_takes_signals_as_ever_and_the_hold_comes_back(sigterm_raises: None) -> None:
    """The user's plugins (a pass that never returns) stop at one signal."""
    holder = compile_signals.compile_holder()
    holder.enter()
    with pytest.raises(Stop):
        with holder.released():
            signal.raise_signal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) == holder.record  # held again for the rest of the compile
    signal.raise_signal(signal.SIGTERM)
    with pytest.raises(Stop):  # recorded, then raised as a released block starts
        with holder.released():
            pass
    holder.leave()
    assert signal.getsignal(signal.SIGTERM) is _raising


def test_user_code_lifts_the_hold_of_a_capture_and_nothing_after_it(sigterm_raises: None) -> None:
    with Patches() as p:
        holder = compile_signals.patch(p)
        assert holder is not None
        holder.enter()
        with signal_guard.user_code():
            assert signal.getsignal(signal.SIGTERM) is _raising
        assert signal.getsignal(signal.SIGTERM) == holder.record
        holder.enter()  # a compile left unfinished when the capture ends: its hold goes with it
    assert signal.getsignal(signal.SIGTERM) is _raising
    with signal_guard.user_code():
        assert signal.getsignal(signal.SIGTERM) is _raising


def test_every_safe_point_is_found_in_this_install() -> None:
    """Dynamo's step, AOT's two stages and TorchAir's node conversion: a torch or TorchAir that renamed
    one would leave its signals waiting for the compile's end (sim loads TorchAir from the wheel)."""
    from airctl.sim.session import load_torchair

    load_torchair()
    from torch._dynamo.symbolic_convert import InstructionTranslatorBase

    points = {f"{getattr(owner, '__name__', owner)}.{name}" for owner, name in
              compile_signals._safe_points(InstructionTranslatorBase)}
    assert points == {"InstructionTranslatorBase.step", "torch._functorch.aot_autograd.aot_stage1_graph_capture",
                      "torch._functorch.aot_autograd.aot_stage2_compile", "_NpuGraphConverter.run_node"}


def test_a_signal_recorded_while_the_handlers_are_put_back_is_raised_not_lost(sigterm_raises: None,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    holder = compile_signals.compile_holder()
    holder.enter()
    install, landed = signal.signal, []

    def signal_with_one_landing(signum: int, handler: object) -> object:
        if not landed:  # the first handler put back: SIGTERM lands before the call, where record is in place
            landed.append(signum)
            holder.record(signal.SIGTERM, None)
        return install(signum, handler)

    monkeypatch.setattr(signal, "signal", signal_with_one_landing)
    with pytest.raises(Stop):
        holder.leave()
    monkeypatch.setattr(signal, "signal", install)
    assert landed and holder.got == [] and signal.getsignal(signal.SIGTERM) is _raising

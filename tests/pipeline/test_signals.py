"""A Ctrl-C that Python drops inside a finalizer is delivered again during a compile (pipeline/run/signals.py)."""

from __future__ import annotations

import gc
import signal
import sys
import time

import pytest

from airctl.pipeline.run.signals import redelivered


class _PressesCtrlC:
    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)  # the handler runs here, in a finalizer: its exception is dropped
        sum(range(10))


def _spin(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.005)


class _Fails:
    def __del__(self) -> None:
        raise ValueError("a finalizer's own error")


def test_a_ctrl_c_dropped_by_a_finalizer_comes_again_and_is_not_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    printed: list = []
    hook = printed.append  # what Python would print as "Exception ignored in ..." comes here
    monkeypatch.setattr(sys, "unraisablehook", hook)
    with redelivered() as interrupts, pytest.raises(KeyboardInterrupt):
        obj = _PressesCtrlC()
        del obj
        gc.collect()
        _spin(10)  # a plugin that never returns: without the second delivery, no KeyboardInterrupt
    assert interrupts.tries >= 1
    assert printed == [], "the dropped interrupt was printed, traceback and all"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert sys.unraisablehook is hook


def test_a_finalizers_own_error_is_still_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    printed: list = []
    monkeypatch.setattr(sys, "unraisablehook", printed.append)
    with redelivered():
        obj = _Fails()
        del obj
        gc.collect()
    assert [type(u.exc_value) for u in printed] == [ValueError]


def test_a_seen_interrupt_is_not_delivered_again() -> None:
    with redelivered() as interrupts:
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
            _spin(1)
        interrupts.seen()
        _spin(1.5)  # no second KeyboardInterrupt

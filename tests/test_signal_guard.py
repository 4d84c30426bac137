"""Signals held back while torch starts (airctl/signal_guard.py): recorded in the block, delivered after it."""

from __future__ import annotations

import signal
import threading

import pytest

from airctl.signal_guard import deferred_signals


class Stop(Exception):
    pass


def _raising(signum: int, frame: object) -> None:
    raise Stop(signum)


def test_a_signal_in_the_block_reaches_its_handler_after_the_block() -> None:
    before = signal.signal(signal.SIGTERM, _raising)
    try:
        reached = []
        with pytest.raises(Stop):
            with deferred_signals():
                signal.raise_signal(signal.SIGTERM)
                signal.raise_signal(signal.SIGTERM)
                reached.append("the rest of the block")  # the handler did not raise in here
        assert reached == ["the rest of the block"]
        assert signal.getsignal(signal.SIGTERM) is _raising
    finally:
        signal.signal(signal.SIGTERM, before)


def test_without_a_signal_the_block_is_a_block() -> None:
    before = signal.signal(signal.SIGTERM, _raising)
    try:
        with deferred_signals():
            value = 1
        assert value == 1 and signal.getsignal(signal.SIGTERM) is _raising
    finally:
        signal.signal(signal.SIGTERM, before)


def test_outside_the_main_thread_nothing_is_swapped() -> None:
    seen: list[object] = []

    def worker() -> None:
        with deferred_signals():
            seen.append(signal.getsignal(signal.SIGINT))

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == [signal.getsignal(signal.SIGINT)]

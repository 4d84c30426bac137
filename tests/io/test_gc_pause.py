"""Pausing the cyclic collector around bulk graph work: pauses nest and overlap across threads, and the
collector comes back exactly as it was (a compile's background writer pauses while the compile does)."""

from __future__ import annotations

import gc
import threading

import pytest

from airctl.io.gc_pause import gc_paused, without_gc


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_off_inside_and_back_after_nested_pauses() -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause ending does not end the outer one
    assert gc.isenabled()


def test_overlapping_pauses_on_two_threads_end_when_the_last_one_does() -> None:
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            entered.set()
            release.wait(5)

    t = threading.Thread(target=other)
    with gc_paused():
        t.start()
        assert entered.wait(5)
    assert not gc.isenabled()  # this thread's pause is over, the other thread's is not
    release.set()
    t.join(5)
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_an_exception_inside_a_paused_function_still_brings_the_collector_back() -> None:
    @without_gc
    def fails() -> None:
        assert not gc.isenabled()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert gc.isenabled()

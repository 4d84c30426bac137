"""Hold SIGINT, SIGTERM and SIGHUP back while torch starts, and deliver them once it has.

airctl's handlers raise an exception at the next bytecode (:mod:`airctl.pipeline.run.signals`).
During ``import torch`` that bytecode can be a Python function torch's C++ start-up calls through
pybind11; the exception then leaves C++ code that cannot pass it on, and the process aborts
(``terminate called after throwing an instance of 'pybind11::error_already_set'``, exit status
-6), leaving its ledger ``running``. Seen once in the suite: a SIGTERM 0.5 s into a compile, while
the sim session imported torch.

:func:`deferred_signals` swaps the Python handlers for ones that only record the signal, and
raises the first one recorded again when the block is done, so the real handler runs at a point
where its exception ends the run as it should. Ctrl-C during torch's import (about 3 s) waits for
the import. Signals without a Python handler (the default action, ignored) are left alone.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

HELD = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Record :data:`HELD` signals during the block; the first one is raised again after it (main thread
    only: elsewhere Python runs no handler, so there is nothing to hold)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []

    def record(signum: int, frame: Any) -> None:
        got.append(signum)

    replaced: dict[int, Any] = {}
    for signum in HELD:
        handler = signal.getsignal(signum)
        if callable(handler):
            replaced[signum] = handler
            signal.signal(signum, record)
    try:
        yield
    finally:
        for signum, handler in replaced.items():
            signal.signal(signum, handler)
        if got:
            signal.raise_signal(got[0])


_LIFT: list[Callable[[], AbstractContextManager[None]]] = []  # the hold on signals in force, if any (one at most)


def lift_with(released: Callable[[], AbstractContextManager[None]] | None) -> None:
    """Name the context that lifts the hold on signals in force (:mod:`airctl.hooks.compile_signals`,
    for the length of a capture); None: there is none."""
    _LIFT[:] = [released] if released is not None else []


@contextmanager
def user_code() -> Iterator[None]:
    """The block runs the user's own Python, called from Python (a pass plugin): a hold on signals in
    force is lifted for it, so a plugin that never returns still stops at one Ctrl-C."""
    if not _LIFT:
        yield
        return
    with _LIFT[0]():
        yield

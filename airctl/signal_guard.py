"""Hold SIGINT, SIGTERM and SIGHUP back while torch starts, and deliver them once it has.

airctl's handlers raise an exception at the next bytecode (:mod:`airctl.pipeline.run.signals`).
During ``import torch`` that bytecode can be a Python function torch's C++ start-up calls through
pybind11; the exception then leaves C++ code that cannot pass it on, and the process aborts
(``terminate called after throwing an instance of 'pybind11::error_already_set'``, exit status
-6), leaving its ledger ``running``. Seen once in the suite: a SIGTERM 0.5 s into a compile, while
the sim session imported torch.

:func:`deferred_signals` swaps the Python handlers for ones that only record the signal
(:class:`Holder`, which :mod:`airctl.hooks.compile_signals` also holds Dynamo's compiles with), and
raises the first one recorded again when the block is done, so the real handler runs at a point
where its exception ends the run as it should. Ctrl-C during torch's import (about 3 s) waits for
the import. Signals without a Python handler (the default action, ignored) are left alone.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

HELD = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Holder:
    """Swaps the process's Python handlers of :data:`HELD` for :meth:`record` while held, and raises the
    first signal recorded through the process's handler when asked (:meth:`deliver`) or when the
    outermost hold ends. Holds nest (:meth:`enter`/:meth:`leave`); :meth:`released` lifts one for a
    block. ``note``: written to stderr when a SIGINT is recorded; ``second_at_once``: a second signal
    while one waits is raised at once (the way out of code stuck in C), else it is dropped.

    Handlers are swapped with :meth:`_install`, which finishes every swap even when a pending signal's
    handler raises inside ``signal.signal`` (CPython runs pending handlers there), so no ``record`` is
    left installed past the outermost hold. Main thread only: callers check (Python runs handlers
    nowhere else)."""

    def __init__(self, note: bytes | None = None, second_at_once: bool = False) -> None:
        self.note, self.second_at_once = note, second_at_once
        self.got: list[int] = []
        self.saved: dict[int, Any] = {}  # the process's handlers, while held
        self._took: list[bool] = []  # per hold in progress: whether it put the swap on

    def enter(self) -> None:
        took = not self.saved
        self._took.append(took)
        if took:
            self._hold()

    def leave(self) -> None:
        if self._took and self._took.pop():
            self._give_back()

    @contextmanager
    def released(self) -> Iterator[None]:
        """The process's own handlers for the block; a signal recorded before is raised first."""
        if not self.saved or threading.current_thread() is not threading.main_thread():
            yield
            return
        self._give_back()
        try:
            yield
        finally:
            if self._took and not self.saved:
                self._hold()

    def record(self, signum: int, frame: Any) -> None:
        if self.got:  # asked twice
            if self.second_at_once:
                self.got.clear()
                self._handler(signum)(signum, frame)
            return
        self.got.append(signum)
        if signum == signal.SIGINT and self.note:
            try:
                os.write(2, self.note)  # not sys.stderr: the handler may run inside its write
            except OSError:
                pass

    def deliver(self) -> None:
        """Raise the signal recorded, if any, through the process's handler."""
        if self.got:
            signum = self.got[0]
            self.got.clear()
            self._handler(signum)(signum, None)

    def restore_all(self) -> None:
        """The process's handlers back, whatever holds are in progress; a signal recorded is raised."""
        self._took.clear()
        self._give_back()

    def _give_back(self) -> None:
        """A signal recorded raised through the process's handler, the handlers put back whatever it
        raised, then one recorded while they were being put back raised through the one in place."""
        try:
            self.deliver()
        finally:
            self._restore()
        self._deliver_late()

    def _deliver_late(self) -> None:
        """A signal recorded while the handlers were being put back: raised now, through the one in place."""
        if self.got:
            signum = self.got[0]
            self.got.clear()
            signal.raise_signal(signum)

    def _handler(self, signum: int) -> Any:
        handler = self.saved.get(signum)
        return handler if callable(handler) else signal.default_int_handler

    def _hold(self) -> None:
        held = {}
        for signum in HELD:
            handler = signal.getsignal(signum)
            if callable(handler) and handler != self.record:
                held[signum] = handler
        self.saved.update(held)
        self._install(dict.fromkeys(held, self.record))

    def _restore(self) -> None:
        back = {signum: handler for signum, handler in self.saved.items() if signal.getsignal(signum) == self.record}
        self._install(back)
        self.saved.clear()

    @staticmethod
    def _install(handlers: dict[int, Any]) -> None:
        """``signal.signal`` for each; one interrupted by a pending handler's exception is done again,
        and the first such exception raised once all are in place."""
        raised: BaseException | None = None
        for signum, handler in handlers.items():
            while True:
                try:
                    signal.signal(signum, handler)
                    break
                except BaseException as error:  # noqa: BLE001 - a pending signal's handler, run inside the call
                    raised = raised or error
        if raised is not None:
            raise raised


@contextmanager
def deferred_signals(holder: Holder | None = None) -> Iterator[None]:
    """Record :data:`HELD` signals during the block (in ``holder``: one more hold of it, default a new
    one); the first one is raised again after it (main thread only: elsewhere Python runs no handler, so
    there is nothing to hold)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    holder = Holder() if holder is None else holder
    try:
        holder.enter()
        yield
    finally:
        holder.leave()


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

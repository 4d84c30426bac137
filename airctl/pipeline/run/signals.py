"""SIGINT, SIGTERM and SIGHUP end a run the same way at every moment, and none is lost.

Python raises ``KeyboardInterrupt`` for SIGINT between two bytecodes of the main thread; SIGTERM
and SIGHUP (what ``timeout``, ``docker stop``, Slurm and torchrun send, or a closed terminal) kill
the process outright, leaving its ledger ``running`` forever. :func:`arm` makes all three raise:
``KeyboardInterrupt`` for SIGINT, :class:`~airctl.errors.Terminated` (a ``KeyboardInterrupt``) for
the other two, so every path that ends a run on Ctrl-C ends it on them too, and the CLI exits
130, 143 or 129. The console script arms them before it imports anything else
(:mod:`airctl.cli.main`), so they hold while TorchAir and the user's script are imported
(TorchAir's own handlers are kept out: :mod:`airctl.hooks.signal_handlers`).

A signal can still vanish: Python also runs handlers inside finalizers (a ``__del__``, the weakref
callbacks of torch's caches), where the exception is printed as "Exception ignored in ..." and
dropped. So until someone says it was handled (:func:`seen`: the run that caught it, or the CLI's
boundary), the same signal is sent to the main thread again every :data:`INTERVAL_S` seconds, at
most :data:`TRIES` times. Such a dropped interrupt is not printed either (:func:`_unraisable`):
its traceback, through torch's weakref callback and this handler, told a user at Ctrl-C nothing
but that something had gone wrong, while the redelivery ends the run as it should.

:func:`redelivered` does the same for one block of a process that did not arm them (airctl used as
a library, tests), standing aside where the process has handlers of its own.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from airctl.errors import Terminated, find_in_chain
from airctl.signal_guard import HELD

INTERVAL_S = 1.0  # long enough for an interrupt on its way out of TorchAir to reach the run's handler
TRIES = 5
DRAIN_S = 0.1  # how long the end of a block waits for a redelivery already sent (it lands in microseconds)
SIGNALS = HELD  # SIGINT, SIGTERM, SIGHUP where the platform has them


class Redelivery:
    """The handler of :data:`SIGNALS` (see the module): raises, and sends again until :meth:`seen`."""

    def __init__(self) -> None:
        self.pending: int | None = None  # the signal raised and not yet seen by whoever ends the run
        self.tries = 0
        self.resent = False  # a redelivery was sent and its handler has not run yet
        self._lock = threading.RLock()  # the handler may run in the main thread while it holds it

    def handler(self, signum: int, frame: Any) -> None:
        with self._lock:
            if self.resent:
                self.resent = False
                if self.pending is None:  # our redelivery of an interrupt seen since it was sent: stale
                    return
            if self.pending is None:  # a new interrupt (an earlier one was seen)
                self.pending, self.tries = signum, 0
            if self.pending == signum:
                if self.tries < TRIES:
                    self.tries += 1
                    timer = threading.Timer(INTERVAL_S, self._again, (signum,))
                    timer.daemon = True
                    timer.start()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum, signal.Signals(signum).name)

    def _again(self, signum: int) -> None:
        main = threading.main_thread().ident
        with self._lock:  # checked and sent under the lock: once seen() returns, nothing more is sent
            if self.pending != signum or main is None:
                return
            self.resent = True
            signal.pthread_kill(main, signum)

    def seen(self) -> None:
        """The interrupt was caught and is being handled: no more deliveries (a redelivery already on
        its way is dropped by the handler)."""
        with self._lock:
            self.pending = None


_ARMED: Redelivery | None = None  # the process's, once armed
_BEFORE: dict[int, Any] = {}  # the handlers arm() replaced, for disarm()
_BLOCK: Redelivery | None = None  # the innermost redelivered() block's, in a process that did not arm
_HOOK_BEFORE: Any = None  # sys.unraisablehook before _unraisable was installed (None: not installed)


def _unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook`` while armed or in a block: an interrupt raised by our handler inside a
    finalizer, which Python drops, goes unprinted (it is pending, so it will be sent again); anything
    else goes to the hook that was there before."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and pending_interrupt() is not None:
        return
    (_HOOK_BEFORE or sys.__unraisablehook__)(unraisable)


def _quiet_dropped_interrupts() -> None:
    """:func:`_unraisable` is the hook exactly while the process is armed or inside a block."""
    global _HOOK_BEFORE
    wanted = _ARMED is not None or _BLOCK is not None
    if wanted and _HOOK_BEFORE is None:
        _HOOK_BEFORE, sys.unraisablehook = sys.unraisablehook, _unraisable
    elif not wanted and _HOOK_BEFORE is not None:
        if sys.unraisablehook is _unraisable:  # else someone replaced it since: theirs stays
            sys.unraisablehook = _HOOK_BEFORE
        _HOOK_BEFORE = None


def arm() -> Redelivery | None:
    """Install :class:`Redelivery` for SIGINT, SIGTERM and SIGHUP for the rest of the process (main
    thread only; a signal the process ignores, as ``nohup`` makes SIGHUP, stays ignored)."""
    global _ARMED
    if threading.current_thread() is not threading.main_thread():
        return None
    if _ARMED is None:
        _ARMED = Redelivery()
    for signum in SIGNALS:
        handler = signal.getsignal(signum)
        if handler is not signal.SIG_IGN and handler != _ARMED.handler:
            _BEFORE[signum] = handler
            signal.signal(signum, _ARMED.handler)
    _quiet_dropped_interrupts()
    return _ARMED


def disarm() -> None:
    """Give the process back the handlers :func:`arm` replaced (the command is over: a console script
    is about to exit, and ``run()`` called in-process leaves the caller's handlers as they were)."""
    global _ARMED
    if _ARMED is None or threading.current_thread() is not threading.main_thread():
        return
    if _drained(_ARMED):  # else keep the handler that drops it: the default one would raise at exit
        for signum, handler in _BEFORE.items():
            if signal.getsignal(signum) == _ARMED.handler:
                signal.signal(signum, handler)
    _BEFORE.clear()
    _ARMED = None
    _quiet_dropped_interrupts()


def forget_after_fork() -> None:
    """In a child forked from an armed process to run a program of its own (a rank forked by
    :mod:`airctl.pipeline.ranks.forks`): no inherited state, and Python's default handlers, as a
    fresh interpreter starts with (a signal the parent ignores stays ignored, as across exec)."""
    global _ARMED, _BLOCK
    _ARMED, _BLOCK = None, None
    _BEFORE.clear()
    _quiet_dropped_interrupts()
    for signum in SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)


def seen() -> None:
    """Whoever ended the run on an interrupt says so: the armed handler stops sending it again."""
    for redelivery in (_ARMED, _BLOCK):
        if redelivery is not None:
            redelivery.seen()


def pending_interrupt() -> KeyboardInterrupt | None:
    """The interrupt raised and never seen by whoever ends the run (swallowed on its way: C code that
    turns it into another error, as an extension module's import does into ImportError), or None."""
    for redelivery in (_ARMED, _BLOCK):
        signum = redelivery.pending if redelivery is not None else None
        if signum is not None:
            return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum, signal.Signals(signum).name)
    return None


def interrupt_behind(error: BaseException) -> KeyboardInterrupt | None:
    """The interrupt that ``error`` stands for, or None: one in its chain (Python 3.11 wraps what a
    descriptor's ``__set_name__`` raises in a ``RuntimeError``, and a signal can land there while a
    module defines a dataclass), or one still pending (C code swallowed it)."""
    return find_in_chain(error, KeyboardInterrupt, suppressed=False) or pending_interrupt()


def hold() -> KeyboardInterrupt | None:
    """Block :data:`SIGNALS` for the rest of the process, which is ending (the console script's last
    steps: ``atexit`` handlers, flushing, ``os._exit``), so that none can land where nothing reports
    it; one that arrives from now on waits, and :func:`held` finds it. Returns the interrupt raised
    while blocking (a signal that had arrived just before, whose handler Python runs on the way out
    of the call), or the one still pending (raised into a finalizer and dropped, its redelivery not
    yet sent), or None. Main thread only (elsewhere: None, nothing blocked)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        return None
    _watch_late()
    raised: KeyboardInterrupt | None = None
    while True:
        try:
            # a signal the kernel gives another thread (the mask is the main thread's) is still
            # handled in the main thread: recorded from here on, never raised into an atexit handler
            for signum in SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    signal.signal(signum, _record_late)
            signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)  # runs the handlers of signals already in
            break
        except KeyboardInterrupt as e:
            raised = raised or e
    return raised or pending_interrupt()


_LATE: list[int] = []  # signals that arrived once the process was ending (:func:`hold`)
_WAKE: list[int] = []  # the read end of the wakeup pipe :func:`hold` set (empty: none)


def _record_late(signum: int, frame: Any) -> None:
    _LATE.append(signum)


def _watch_late() -> None:
    """Have the C-level handler write every signal's number to a pipe from now on. Python runs a
    handler only between two bytecodes of the main thread: a signal the kernel hands another thread
    (torch's, the ledger writer's) while the main thread has them blocked, in the last stretch
    before ``os._exit``, was tripped but never handled — neither recorded nor pending, and the
    process ended 0. The pipe has it whatever the main thread does."""
    if _WAKE or not hasattr(signal, "set_wakeup_fd"):
        return
    try:
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except (OSError, ValueError):  # not the main thread, or no descriptors left: the other checks remain
        return
    _WAKE.append(r)


def _woken() -> list[int]:
    """The signals the C-level handler wrote to the wakeup pipe since :func:`hold`."""
    found: list[int] = []
    for fd in _WAKE:
        try:
            while data := os.read(fd, 512):
                found += list(data)
        except (BlockingIOError, OSError):
            pass
    return found


def held() -> KeyboardInterrupt | None:
    """The first of :data:`SIGNALS` that arrived since :func:`hold` (recorded, waiting blocked, or
    tripped in another thread and not yet handled), or None."""
    waiting = signal.sigpending() if hasattr(signal, "sigpending") else set()
    woken = [s for s in _woken() if s in SIGNALS]
    for signum in [*_LATE, *(s for s in SIGNALS if s in waiting), *woken]:
        return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum, signal.Signals(signum).name)
    return None


def armed() -> bool:
    return _ARMED is not None and signal.getsignal(signal.SIGINT) == _ARMED.handler


@contextmanager
def redelivered() -> Iterator[Redelivery]:
    """:class:`Redelivery` for the block where the process has Python's default handlers (a library
    call, a test); where it armed them already, or has its own, the block changes nothing."""
    global _BLOCK
    redelivery = _ARMED or Redelivery()
    ours = [s for s in SIGNALS if _default(s)]
    if threading.current_thread() is not threading.main_thread() or signal.SIGINT not in ours:
        yield redelivery
        return
    before = {s: signal.getsignal(s) for s in ours}
    outer, _BLOCK = _BLOCK, redelivery
    for s in ours:
        signal.signal(s, redelivery.handler)
    _quiet_dropped_interrupts()
    try:
        yield redelivery
    finally:
        drained = _drained(redelivery)
        _BLOCK = outer
        if drained:  # else, as disarm() does, the handler that drops the redelivery on its way stays
            for s, handler in before.items():
                signal.signal(s, handler)
        _quiet_dropped_interrupts()


def _drained(redelivery: Redelivery) -> bool:
    """:meth:`~Redelivery.seen`, then wait (:data:`DRAIN_S` at most) for a redelivery sent before it
    to land in our handler, which drops it: put back now, Python's own handler would raise it as a
    ``KeyboardInterrupt`` in the caller's code after the block. False if it is still on its way."""
    redelivery.seen()
    deadline = time.monotonic() + DRAIN_S
    while True:
        with redelivery._lock:  # after seen() nothing more is sent; one sent before it may not have landed
            if not redelivery.resent:
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)  # the main thread (both callers run only there) runs its signal handlers here


def _default(signum: int) -> bool:
    handler = signal.getsignal(signum)
    return handler is signal.default_int_handler if signum == signal.SIGINT else handler is signal.SIG_DFL

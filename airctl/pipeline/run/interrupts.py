"""A Ctrl-C that Python drops during a compile is delivered again.

Python runs a signal's handler between two bytecodes of the main thread — also inside a finalizer
(a ``__del__``, a weakref callback such as the one of every ``WeakValueDictionary``), where the
``KeyboardInterrupt`` it raises is printed as "Exception ignored in ..." and dropped. Torch's
caches run such callbacks all through a compile, so now and then a Ctrl-C vanishes, and a compile
stuck in a plugin that never returns stays stuck. :func:`redelivered` installs, for the length of
a compile, a SIGINT handler that raises ``KeyboardInterrupt`` as Python's own does and, until the
compile says it saw one (:meth:`Redelivery.seen`), sends SIGINT to the main thread again every
:data:`INTERVAL_S` seconds (at most :data:`TRIES` times). It stands aside when the process has its
own SIGINT handler, or outside the main thread.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

INTERVAL_S = 1.0  # long enough for an interrupt on its way out of TorchAir to reach the compile's handler
TRIES = 5


class Redelivery:
    """The compile's SIGINT handler (see the module)."""

    def __init__(self) -> None:
        self.pending = False  # raised, not yet seen by the compile
        self.tries = 0
        self._lock = threading.Lock()

    def handler(self, signum: int, frame: Any) -> None:
        with self._lock:
            self.pending = True
            if self.tries < TRIES:
                self.tries += 1
                timer = threading.Timer(INTERVAL_S, self._again)
                timer.daemon = True
                timer.start()
        raise KeyboardInterrupt

    def _again(self) -> None:
        with self._lock:
            if not self.pending:
                return
        main = threading.main_thread().ident
        if main is not None:
            signal.pthread_kill(main, signal.SIGINT)

    def seen(self) -> None:
        """The compile caught the interrupt: no more deliveries."""
        with self._lock:
            self.pending = False
            self.tries = TRIES


@contextmanager
def redelivered() -> Iterator[Redelivery]:
    """:class:`Redelivery` as the SIGINT handler for the block (when Python's default one is installed)."""
    redelivery = Redelivery()
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield redelivery
        return
    signal.signal(signal.SIGINT, redelivery.handler)
    try:
        yield redelivery
    finally:
        redelivery.seen()
        signal.signal(signal.SIGINT, signal.default_int_handler)

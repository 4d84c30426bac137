"""A time limit for one pass (``timeout:`` in a pass file): a plugin that never returns is stopped.

A custom pass runs inside TorchAir's compile, on the thread that called the compiled model, and a
Python thread cannot be killed from outside. So the limit is a real-time timer (``SIGALRM``) whose
handler raises :class:`PassTimedOut` in the pass's own frame, wherever its loop is. The exception
derives from :class:`BaseException`, like :class:`KeyboardInterrupt`, so a plugin's
``except Exception`` does not swallow it. The caller turns it into a
:class:`~airctl.errors.PassError` that names the pass and the plugin line it was stopped at.

Only the main thread receives signals: elsewhere (or without ``setitimer``) the pass runs without a
limit. A timer armed by someone else before the pass is put back, less the time the pass took.

>>> import time
>>> try:
...     with time_limit(0.05):
...         while True:
...             time.sleep(0.001)
... except PassTimedOut as e:
...     print(e)
ran past its time limit of 0.05 s
>>> with time_limit(None):
...     pass
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_SECONDS = 600.0  # generous: TorchAir's own passes take milliseconds, a big plugin seconds


class PassTimedOut(BaseException):  # noqa: N818 - an interrupt, like KeyboardInterrupt
    """Raised in a pass's frame when its time limit is reached."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"ran past its time limit of {seconds:g} s")
        self.seconds = seconds


def _can_limit() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`PassTimedOut` in the body after ``seconds`` (None or 0: no limit)."""
    if not seconds or not _can_limit():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise PassTimedOut(seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    earlier, interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
        if earlier:  # someone else's timer: re-armed with what was left of it
            signal.setitimer(signal.ITIMER_REAL, max(earlier - (time.monotonic() - started), 0.001), interval)

"""Keep Python's SIGINT/SIGTERM handlers when TorchAir is imported (both backends).

TorchAir's ``core/_backend.py`` installs, at import, a handler for SIGINT and SIGTERM that
finalizes the Graph Engine — ``torch._dynamo.reset()`` from inside the signal handler — then
ignores the signal and sends it again. Pressed during a compile, that reset fails ("Cannot clear
callbacks while 1 are pending") and the failure is blamed on the model, or it crashes the
process, or the signal is swallowed and the compile goes on; torchrun's SIGTERM to a failed
rank's siblings is ignored the same way. airctl keeps the handlers the process had before the
import instead: Ctrl-C is a ``KeyboardInterrupt`` (exit 130, the ledger marked ``interrupted``),
SIGTERM ends the process. TorchAir's ``atexit`` finalization still runs at exit.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s is not None)


@contextmanager
def kept() -> Iterator[None]:
    """Whatever the block installs for SIGINT/SIGTERM is undone when it ends (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.getsignal(s) for s in SIGNALS}
    try:
        yield
    finally:
        for s, handler in before.items():
            if handler is not None and signal.getsignal(s) is not handler:
                signal.signal(s, handler)

"""Keep the process's SIGINT/SIGTERM/SIGHUP handlers when TorchAir is imported (both backends).

TorchAir's ``core/_backend.py`` installs, at import, a handler for SIGINT and SIGTERM that
finalizes the Graph Engine — ``torch._dynamo.reset()`` from inside the signal handler — then
ignores the signal and sends it again. Pressed during a compile, that reset fails ("Cannot clear
callbacks while 1 are pending") and the failure is blamed on the model, or it crashes the
process, or the signal is swallowed and the compile goes on; torchrun's SIGTERM to a failed
rank's siblings is ignored the same way. airctl keeps the handlers the process had before the
import instead, and keeps them installed all through the import (``signal.signal`` refuses these
three signals while it runs: a signal landing mid-import met TorchAir's handler and was lost):
Ctrl-C is a ``KeyboardInterrupt`` (exit 130, the ledger marked ``interrupted``), SIGTERM and
SIGHUP end the run ``terminated`` (:mod:`airctl.pipeline.run.signals`). TorchAir's ``atexit``
finalization still runs at exit.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from airctl.signal_guard import HELD as SIGNALS


@contextmanager
def kept() -> Iterator[None]:
    """Handlers the block tries to install for SIGINT/SIGTERM/SIGHUP are not installed (main thread
    only): the process's own stay in place while TorchAir is imported, so a signal that arrives
    during the import ends the run as at any other moment (:mod:`airctl.pipeline.run.signals`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.getsignal(s) for s in SIGNALS}
    install = signal.signal

    def refused(signum: Any, handler: Any) -> Any:
        if signum in before:
            return signal.getsignal(signum)  # as if installed: TorchAir keeps no reference it relies on
        return install(signum, handler)

    signal.signal = refused  # type: ignore[assignment]
    try:
        yield
    finally:
        signal.signal = install  # type: ignore[assignment]
        for s, handler in before.items():
            if handler is not None and signal.getsignal(s) is not handler:
                install(s, handler)

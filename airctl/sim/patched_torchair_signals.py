"""Patch of the process's signal handlers around TorchAir's import: SIGTERM and SIGINT stay ours.

Importing ``torchair.core._backend`` installs a SIGTERM and a SIGINT handler that finalizes the
Graph Engine, sets the signal to ``SIG_IGN`` and sends it to the process again, which then
ignores it: Ctrl-C no longer stops a run, and torchrun's SIGTERM to a rank whose peer failed does
nothing until torchrun kills it 30 s later (the rank's ledger left ``running``). Under sim there
is no Graph Engine to finalize (the stand-in keeps nothing that outlives the process), so the
handlers in place before the import come back as soon as it is done: Ctrl-C raises
``KeyboardInterrupt`` as in any Python program, and a handler airctl's rank worker installs for
SIGTERM stays in place.
"""

from __future__ import annotations

import signal

from airctl.sim.patching import Patches

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def patch(p: Patches) -> None:
    """Remember the handlers now; they are put back when ``p`` is restored (after the import)."""
    for signum in SIGNALS:
        p.signal(signum)

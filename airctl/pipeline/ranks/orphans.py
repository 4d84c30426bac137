"""The launcher of a multi-rank run owns its descendants: they end when it ends, however it ends.

torchrun's agent runs inside the launcher, and below it are the fork server, one rank client per
rank and the ranks themselves (or the fresh rank workers). Ended by a signal it can handle, the
launcher stops them through torchrun. Killed outright (SIGKILL, the OOM killer), it stopped nothing:
the fork server, the clients and the ranks went on, each rank a session of its own that no
terminal signal reaches. So:

- every descendant asks the kernel for SIGKILL when its parent dies (:func:`die_with_parent`,
  Linux's ``PR_SET_PDEATHSIG``): the fork server and the fresh workers when the launcher dies, each
  forked rank when the fork server dies; the rank client does the same in its own file (it cannot
  import airctl). A parent already gone when the child asks is checked right after, so no window
  stays open.
- a launcher that starts looks for what a killed one may still have left in the same ``--out``
  (:func:`sweep_leftovers`): a rank whose top run's process is gone, yet whose own process (its
  pid and start time, as the rank's ``index.json`` records them) still runs, is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path
from typing import Any

from airctl.errors import LedgerError
from airctl.ledger.index_load import load_index
from airctl.ledger.liveness import alive

PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int, signum: int = signal.SIGKILL) -> None:
    """``signum`` to this process when its parent (``parent``, the pid before the fork or spawn)
    dies; ended at once when the parent is already gone. Linux only (elsewhere nothing is done)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
            return
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the request: the kernel will not tell us
        os.kill(os.getpid(), signum)


def sweep_leftovers(out_dir: Path) -> list[int]:
    """Kill the ranks that killed launchers left running under ``out_dir``; their pids."""
    killed: list[int] = []
    try:
        runs = [p for p in Path(out_dir).iterdir() if (p / "ranks").is_dir()]
    except OSError:
        return killed
    for top in runs:
        index = _index(top / "index.json")
        if index is None or index.get("status") != "running" or alive(index.get("process")) is not False:
            continue
        with contextlib.suppress(OSError):
            for rank in (top / "ranks").iterdir():
                record = (_index(rank / "index.json") or {}).get("process")
                if isinstance(record, dict) and alive(record) and isinstance(record.get("pid"), int):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(record["pid"], signal.SIGKILL)
                        killed.append(record["pid"])
    return killed


def _index(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = load_index(path)
    except LedgerError:
        return None
    return data if isinstance(data, dict) else None

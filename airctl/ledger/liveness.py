"""Is the process writing a run still alive? A ``running`` ledger whose process is gone has ``died``.

A run killed by SIGKILL, the OOM killer or a power cut cannot mark its own ledger; it stays
``running`` forever unless readers check. So every ledger records who writes it
(``index.json`` ``process``: pid, host, and the process's start time, which tells a pid reused by
another process apart), and every reader (``airctl runs``, ``show``, the current run) asks
:func:`effective_status`: a ``running`` run whose process is gone on this host reads as ``died``.
A run written on another host cannot be checked from here; it keeps its recorded status.

>>> record = process_record()
>>> alive(record)
True
>>> alive({**record, "pid": 2**22 + 1})
False
"""

from __future__ import annotations

import os
import socket
from typing import Any

RUNNING = "running"
DIED = "died"


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux ``/proc/PID/stat`` field 22)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read(4096).decode("ascii", "replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def process_record() -> dict[str, Any]:
    """Who writes this run: ``index.json`` ``process``."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "start_ticks": _start_ticks(os.getpid())}


def alive(record: Any) -> bool | None:
    """True/False for a process of this host; None when it cannot be told (another host, no record)."""
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int):
        return None
    if record.get("host") != socket.gethostname():
        return None
    pid = record["pid"]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        pass
    except (OSError, OverflowError, ValueError):
        return False
    ticks = record.get("start_ticks")
    if isinstance(ticks, int):
        now = _start_ticks(pid)
        if now is not None and now != ticks:
            return False  # the pid was reused by a later process
    return True


def effective_status(index: dict[str, Any]) -> str | None:
    """The run's status as readers show it: ``died`` for a ``running`` run whose process is gone."""
    status = index.get("status")
    if status == RUNNING and alive(index.get("process")) is False:
        return DIED
    return status if isinstance(status, str) else None


def died_error(index: dict[str, Any]) -> dict[str, Any]:
    """What is known of a run that died: the index's ``error`` when it names one."""
    process = index.get("process") if isinstance(index.get("process"), dict) else {}
    last = None
    for graph in index.get("graphs") or []:
        stages = graph.get("stages") if isinstance(graph, dict) else None
        if stages:
            last = f"{graph.get('id')}:{stages[-1].get('name')}"
    where = f" after stage {last}" if last else " before any stage was captured"
    return {"type": "Died", "message": f"the process (pid {process.get('pid')}) ended without closing the run"
            f"{where} (killed, e.g. SIGKILL or out of memory)"}


def seen_alive(data: Any) -> Any:
    """A parsed ``index.json`` as readers show it: a run whose process died says ``died``, and why."""
    if isinstance(data, dict) and effective_status(data) == DIED:
        detail = died_error(data)
        data = {**data, "status": DIED, "error": data.get("error") or detail["message"],
                "error_detail": data.get("error_detail") or detail}
    return data

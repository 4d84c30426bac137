"""Is the process writing a run still alive? A ``running`` ledger whose process is gone has ``died``.

A run killed by SIGKILL, the OOM killer or a power cut cannot mark its own ledger; it stays
``running`` forever unless readers check. So every ledger records who writes it
(``index.json`` ``process``: pid, host, and the process's start time, which tells a pid reused by
another process apart), and every reader (``airctl runs``, ``show``, the current run) asks
:func:`effective_status`: a ``running`` run whose process is gone on this host reads as ``died``.
A run written on another host cannot be checked from here; it keeps its recorded status.
A run whose process crashed in native code (a segfault, an abort) has ``crash.txt`` beside its
index (:mod:`airctl.pipeline.run.crash_record`): readers name the signal and the innermost Python
frame from it.

>>> record = process_record()
>>> alive(record)
True
>>> alive({**record, "pid": 2**22 + 1})
False
"""

from __future__ import annotations

import os
import re
import socket
import sys
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.safe_files import open_regular

RUNNING = "running"
DIED = "died"
_AIRCTL = Path(__file__).resolve().parents[1]
CRASH_FILE = "crash.txt"  # faulthandler's report of a native crash while the run was open
CRASH_READ_LIMIT = 256 * 1024  # every thread's stack of a big process fits; nothing past it is read
_FATAL = re.compile(r"^Fatal Python error: (.{1,120})$", re.MULTILINE)
_FRAME = re.compile(r'^\s+File "(.{1,500})", line (\d+) in (\S{1,200})$', re.MULTILINE)


def proc_stat(pid: int) -> list[str] | None:
    """Linux ``/proc/PID/stat``'s fields after the command name (which may hold spaces): ``[0]`` the
    state (``Z``: ended, not yet reaped), ``[1]`` the parent's pid, ``[19]`` the start time in clock
    ticks since boot; None when it cannot be read (no such process, not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read(4096).decode("ascii", "replace").rpartition(")")[2].split()
    except OSError:
        return None


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (``/proc/PID/stat`` field 22)."""
    try:
        return int((proc_stat(pid) or [])[19])
    except (IndexError, ValueError):
        return None


def process_age() -> float | None:
    """Seconds since this process started (``/proc/uptime`` less its start ticks), None off Linux:
    the start-up before a run's ledger exists (``timings.startup_seconds``)."""
    ticks = _start_ticks(os.getpid())
    try:
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read(256).split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return None if ticks is None else max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))


_STARTUP: dict[int, float | None] = {}  # pid -> its command's start-up (the process's age when the command began)
_RECORDED: set[int] = set()  # pids whose first ledger took the start-up


def command_begins() -> None:
    """The command's own code starts now (the CLI calls this as it dispatches): the process's age is
    its start-up. Once per process; a forked process (a rank, a warm command) has its own."""
    _STARTUP.setdefault(os.getpid(), process_age())


def startup_for_ledger() -> tuple[float | None, float | None]:
    """What a new ledger records of the time before it: the command's start-up (else the process's
    age) and the command's own work until now (None when not known), for the first ledger a process
    writes only; a later one (a bisect step, a profile round, suggest's check) has neither."""
    pid = os.getpid()
    if pid in _RECORDED:
        return None, None
    _RECORDED.add(pid)
    age = process_age()
    startup = _STARTUP.get(pid)
    if startup is None or age is None:
        return age, None
    return startup, max(0.0, age - startup)


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


def crash_report(root: Path | str | None) -> dict[str, Any] | None:
    """What ``<root>/crash.txt`` says: the fatal error, and the crashing thread's innermost Python
    frame (``where``); None when there is no report (or it cannot be read as one)."""
    if root is None:
        return None
    try:
        with open_regular(Path(root) / CRASH_FILE, follow_links=False) as f:
            text = f.read(CRASH_READ_LIMIT)
    except (OSError, AirctlError):  # absent, a link, not a regular file: no report
        return None
    report = text.decode("utf-8", "replace")
    fatal = _FATAL.search(report)
    if fatal is None:
        return None
    current = report.find("Current thread ", fatal.end())
    if current < 0:
        return {"error": fatal.group(1), "where": None, "user_frame": None, "file": CRASH_FILE}
    end = report.find("\n\n", current)
    stack = _FRAME.finditer(report, current, end if end > 0 else len(report))  # the crashing thread's only
    frames = [(m.group(3), m.group(1), m.group(2)) for m in stack]
    inner = f"{frames[0][0]} at {frames[0][1]}:{frames[0][2]}" if frames else None
    user = next((f"{name} at {path}:{line}" for name, path, line in frames if not library_frame(path)), None)
    return {"error": fatal.group(1), "where": inner, "user_frame": user if user != inner else None,
            "file": CRASH_FILE}


def library_frame(path: str) -> bool:
    """A frame (its file name) of Python's own library, an installed package, airctl, or code with no
    file: not the user's code (a crash report's frames, an interrupt's, :mod:`airctl.pipeline.run.lifecycle`)."""
    p = Path(path)
    return not p.is_absolute() or bool({"site-packages", "dist-packages"} & set(p.parts)) or \
        p.is_relative_to(sys.base_prefix) or p.is_relative_to(_AIRCTL) or path.startswith("<")


def died_error(index: dict[str, Any], root: Path | str | None = None) -> dict[str, Any]:
    """What is known of a run that died: the index's ``error`` when it names one; the crash report
    in ``root`` (the ledger's folder) when the process crashed in native code."""
    process = index.get("process") if isinstance(index.get("process"), dict) else {}
    last = None
    for graph in index.get("graphs") or []:
        stages = graph.get("stages") if isinstance(graph, dict) else None
        if stages:
            last = f"{graph.get('id')}:{stages[-1].get('name')}"
    where = f" after stage {last}" if last else " before any stage was captured"
    crash = crash_report(root)
    if crash is not None:
        at = f" in {crash['where']}" if crash["where"] else ""
        at += f", called from {crash['user_frame']}" if crash["user_frame"] else ""
        return {"type": "Crashed", "message": f"the process (pid {process.get('pid')}) crashed{where}: "
                f"{crash['error']}{at} (every thread's Python stack: {CRASH_FILE} in the ledger)", "crash": crash}
    return {"type": "Died", "message": f"the process (pid {process.get('pid')}) ended without closing the run"
            f"{where} (killed, e.g. SIGKILL or out of memory)"}


def seen_alive(data: Any, root: Path | str | None = None) -> Any:
    """A parsed ``index.json`` as readers show it: a run whose process died says ``died``, and why
    (``root``: the ledger's folder, where a native crash left its report)."""
    if isinstance(data, dict) and effective_status(data) == DIED:
        detail = died_error(data, root)
        data = {**data, "status": DIED, "error": data.get("error") or detail["message"],
                "error_detail": data.get("error_detail") or detail}
    return data

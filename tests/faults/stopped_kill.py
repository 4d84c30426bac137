"""A signal sent only to a process that has not begun to exit, decided while it is stopped.

Interrupt sweeps (tests/faults/test_interrupt_at_the_end.py, bench/bench_interrupt_sweep.py) send
SIGINT at moments of a command's life, and must tell "the command ended 0 though interrupted" (a
bug) from "the command had already reached its exit" (no interrupt to speak of). A check followed by
a kill races the process between the two: it is stopped (SIGSTOP) for the check and the kill, then
continued.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

PF_EXITING = 0x4  # /proc/PID/stat flags: the process called exit; the kernel delivers it no signal any more


def exiting(pid: int) -> bool:
    """Whether ``pid`` has exited or is exiting (``_exit`` called: tearing down a big process's memory
    takes milliseconds in which a signal is accepted by kill() but never delivered)."""
    if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
        return True
    fields = _stat(pid)
    try:
        return fields[0] in "ZX" or bool(int(fields[6]) & PF_EXITING)
    except (IndexError, ValueError):
        return True


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (state first); ``["X"]`` when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split() or ["X"]
    except OSError:
        return ["X"]


def interrupt_unless_exiting(pid: int) -> bool:
    """SIGINT to ``pid`` unless it has begun to exit, decided while it is stopped (SIGSTOP, then SIGCONT).
    Without the stop, a process that reached its exit between this test's check and its kill (this test
    descheduled for a few milliseconds on a busy host) took the signal while exiting and ended 0: once in
    a fresh-clone CI run, the test's own race. Returns whether it was sent."""
    os.kill(pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 10
        while _stat(pid)[0] not in "TtZX" and not exiting(pid) and time.monotonic() < deadline:
            time.sleep(0.0005)
        if exiting(pid):
            return False
        os.kill(pid, signal.SIGINT)
        return True
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)

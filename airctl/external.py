"""Run a program airctl does not control (``--bad-cmd``, ``dot``, chromium): one runner for all of them.

A user's ``--bad-cmd`` may hang, fork children that hang, or print bytes that are not UTF-8;
``dot`` may spin on a huge graph. So every external command:

- runs in **its own process group** (``start_new_session``): on a timeout, on Ctrl-C, or when
  the command exits leaving children behind, the **whole group** is killed (SIGTERM, then
  SIGKILL after :data:`GRACE_S`), never just the shell, so no orphan lives on;
- has a **visible timeout**, given by the caller from an option the user can set;
- has its output **decoded with replacement** (invalid bytes become U+FFFD, never an exception),
  and kept to its last :data:`KEEP_BYTES` bytes per stream.

It sits on the floor (imports nothing of airctl), so renderers and the pipeline share it.

>>> run_command(["sh", "-c", "printf 'a\\\\377b'; exit 3"], timeout_s=10).stdout
'a\\ufffdb'
>>> run_command(["sh", "-c", "sleep 5 & sleep 5"], timeout_s=0.2).timed_out
True
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from airctl.settings import TOOL_TIMEOUT, number

GRACE_S = 2.0  # between SIGTERM and SIGKILL of the group
KEEP_BYTES = 1 << 20  # of each stream, the tail (not for ``keep_stdout``: a tool's result)
TOOL_TIMEOUT_ENV = TOOL_TIMEOUT.name  # seconds: the time limit of the tools airctl launches (dot, chromium)


def tool_timeout(default_s: float) -> float:
    """The time limit of a tool airctl launches: ``$AIRCTL_TOOL_TIMEOUT`` when set (a positive number;
    anything else is an error naming it), else ``default_s``; the errors that report a timeout name the variable."""
    text = os.environ.get(TOOL_TIMEOUT_ENV, "").strip()
    return number(TOOL_TIMEOUT, text) if text else default_s


@dataclass
class Finished:
    """How an external command ended. ``returncode`` is None when it was killed for its timeout."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float
    output: bytes = b""  # stdout as bytes, with keep_stdout

    @property
    def last_line(self) -> str:
        """The last non-empty line it printed (stdout, then stderr)."""
        lines = (self.stdout + "\n" + self.stderr).strip().splitlines()
        return lines[-1] if lines else ""


def run_command(cmd: str | Sequence[str], *, timeout_s: float, shell: bool = False, input: bytes | None = None,
                env: Mapping[str, str] | None = None, keep_stdout: bool = False) -> Finished:
    """Run ``cmd`` (a list, or a shell string with ``shell=True``) in its own process group, at most
    ``timeout_s`` seconds; its group is killed when the time is up or when airctl is interrupted.
    ``keep_stdout``: stdout is the tool's result, kept whole in ``Finished.output`` (bytes)."""
    if not timeout_s > 0:
        raise ValueError(f"timeout must be positive, not {timeout_s!r}")
    started = time.monotonic()
    proc = subprocess.Popen(cmd, shell=shell, env=dict(env) if env is not None else None,  # noqa: S603
                            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    timed_out = False
    try:
        try:
            out, err = proc.communicate(input, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = proc.poll() is None  # else it exited, and a child it left holds the pipes open
            kill_group(proc)
            out, err = _drain(proc)
    except BaseException:  # Ctrl-C while it runs: its group goes too
        kill_group(proc)
        raise
    kill_group(proc, grace_s=0.0)  # children it left running in the background
    return Finished(None if timed_out else proc.returncode, _text(out), _text(err), timed_out,
                    time.monotonic() - started, (out or b"") if keep_stdout else b"")


def kill_group(proc: subprocess.Popen, grace_s: float = GRACE_S) -> None:
    """SIGTERM to ``proc``'s process group, SIGKILL to what is left after ``grace_s``; reaps ``proc``."""
    pgid = proc.pid  # start_new_session: the group id is the leader's pid
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 0.0)):
        if sig == signal.SIGTERM and not grace_s:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        if wait_s:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(wait_s)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(GRACE_S)


def _drain(proc: subprocess.Popen) -> tuple[bytes, bytes]:
    """What a killed command had printed (its pipes close once its group is dead)."""
    try:
        return proc.communicate(timeout=GRACE_S)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        return b"", b""


def _text(data: bytes | None) -> str:
    return (data or b"")[-KEEP_BYTES:].decode("utf-8", errors="replace")

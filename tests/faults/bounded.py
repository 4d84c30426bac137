"""Run a command as a child with its memory capped, and measure it: the harness of the issue-47 fault tests.

An input with no end (``/dev/zero``, an alias bomb) took 17 GB in 8 s before the fixes: a test of it
must not be able to take the machine with it should the fix regress. So the child runs under
``RLIMIT_AS`` (:data:`ADDRESS_SPACE`, far above the 500 MB a run may reach, far below the host's
memory), with a wall-clock limit, and its peak RSS is read from ``wait4``'s own accounting of that
one child.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO

ADDRESS_SPACE = 6 << 30  # torch's import maps ~3 GB of address space it never touches
RSS_LIMIT_MB = 500  # issue 47: any input, at most this much memory
MEASURER = Path(__file__).with_name("measured_child.py")


@dataclass
class Ended:
    returncode: int
    stdout: str
    stderr: str
    rss_mb: float
    seconds: float
    timed_out: bool
    own_mb: float | None = None  # the peak of what it allocated (anonymous + shared: measured_child.py)

    @property
    def text(self) -> str:
        return self.stdout + self.stderr


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    os.setsid()  # its own group: a timeout ends everything it started


def run_capped(argv: Sequence[str | Path], *, cwd: Path, timeout: float = 120.0, env: dict[str, str] | None = None,
               interrupt_after: float | None = None) -> Ended:
    """``argv`` as a capped child in ``cwd`` (``PYTHONPATH`` = this checkout); SIGINT after
    ``interrupt_after`` seconds when given; SIGKILL to its group at ``timeout``."""
    environ = {**os.environ, "PYTHONPATH": str(REPO), "TORCH_DEVICE_BACKEND_AUTOLOAD": "0", **(env or {})}
    out, err, measured = cwd / ".stdout", cwd / ".stderr", cwd / ".measured.json"
    measured.unlink(missing_ok=True)
    with open(out, "wb") as o, open(err, "wb") as e:
        start = time.monotonic()
        # the command runs under measured_child.py, which forks it from a small interpreter (its peak RSS
        # would otherwise start at this worker's) and reports its status and peak RSS
        proc = subprocess.Popen([sys.executable, str(MEASURER), str(measured), *[str(a) for a in argv]], cwd=cwd,
                                env=environ, stdout=o, stderr=e, stdin=subprocess.DEVNULL,
                                preexec_fn=_cap)  # noqa: PLW1509 - the cap is the point
        timed_out, interrupted = False, False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            elapsed = time.monotonic() - start
            if interrupt_after is not None and not interrupted and elapsed >= interrupt_after:
                os.kill(proc.pid, signal.SIGINT)
                interrupted = True
            if elapsed > timeout and not timed_out:
                os.killpg(proc.pid, signal.SIGKILL)
                timed_out = True
            time.sleep(0.01)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - start
    rss_kb, own_kb = usage.ru_maxrss, None
    if measured.is_file():  # the command's own figures (absent when the group was killed at the timeout)
        child = json.loads(measured.read_text())
        proc.returncode, rss_kb, own_kb = child["code"], child["maxrss_kb"], child.get("own_kb")
    return Ended(proc.returncode, out.read_text(errors="replace"), err.read_text(errors="replace"),
                 rss_kb / 1024, seconds, timed_out, own_kb / 1024 if own_kb else None)


def airctl_capped(*args: str | Path, cwd: Path, **kwargs: object) -> Ended:
    return run_capped([sys.executable, "-m", "airctl", *args], cwd=cwd, **kwargs)  # type: ignore[arg-type]


def python_capped(code: str, *, cwd: Path, **kwargs: object) -> Ended:
    return run_capped([sys.executable, "-c", code], cwd=cwd, **kwargs)  # type: ignore[arg-type]

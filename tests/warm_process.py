"""``python -m airctl`` in a process of its own, forked from the product's warm process.

Tests that need a process of their own (signals sent to it, process-global TorchAir options and log
levels a script sets, exit codes as a shell sees them) but are not about torch's and TorchAir's
import start it here. The suite runs airctl's own warm process (:mod:`airctl.cli.warm`, docs/warm.md)
in a private folder of the session: the first test process to need it starts it, the others (xdist
workers) find it there (its lock says it is alive), and it ends with the session's controller
(``AIRCTL_WARM_OWNER``), so the suite leaves no warm process behind. Each command is asked for
with the product's client (:func:`airctl.pipeline.warm.client.submit`), stdio as files; where the
warm process answers that the command must run cold (an environment that changes what torch reads
at import), or when a test asks for it (``fresh``), it is a fresh interpreter instead.
"""

from __future__ import annotations

import os
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from airctl.pipeline.warm import client, daemon, place

REPO = Path(__file__).resolve().parents[1]
START_S = 300  # how long the warm process may take to warm up on a busy machine


@dataclass
class Child:
    """A started command: ``pid`` (its own process group), :meth:`wait`, then ``stdout``/``stderr``.
    Forked by the warm process (``submitted``) or a fresh interpreter (``proc``)."""

    pid: int
    submitted: client.Submitted | None
    proc: subprocess.Popen | None
    out: Path
    err: Path
    returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        """The exit code (negative: the signal that ended it); :class:`subprocess.TimeoutExpired` as Popen."""
        if self.returncode is None:
            if self.proc is not None:
                self.returncode = self.proc.wait(timeout)
            else:
                assert self.submitted is not None
                try:
                    self.returncode = self.submitted.wait(timeout)
                except TimeoutError:
                    raise subprocess.TimeoutExpired(f"airctl (pid {self.pid})", timeout or 0) from None
        return self.returncode

    def finish(self, timeout: float, what: object = "airctl") -> Child:
        """Wait for the end; past ``timeout`` s, kill its process group and fail naming ``what``."""
        try:
            self.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.pid, signal.SIGKILL)
            self.wait()
            raise AssertionError(f"{what} still running after {timeout} s") from None
        return self

    @property
    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.err.read_text(errors="replace")


class WarmProcess:
    """The session's warm process, as a test process sees it."""

    def __init__(self, folder: Path, key: str) -> None:
        self.folder, self.key = folder, key
        self.socket = str(place.files(folder, key)["sock"])

    @classmethod
    def shared(cls) -> WarmProcess:
        """The session's warm process: found alive in the controller's folder, or started there now."""
        owner = os.getppid() if "PYTEST_XDIST_WORKER" in os.environ else os.getpid()
        return cls._at(f"airctl-warm-test-{os.getuid()}-{owner}", owner)

    @classmethod
    def private(cls, name: str) -> WarmProcess:
        """A warm process of this test process alone (``name`` tells it apart), ending with it: for tests
        that count its forks, which the session's serves to every worker at once."""
        return cls._at(f"airctl-warm-{name}-{os.getuid()}-{os.getpid()}", os.getpid())

    @classmethod
    def _at(cls, folder_name: str, owner: int) -> WarmProcess:
        folder = place.private(Path(tempfile.gettempdir()) / folder_name)
        if folder is None:
            raise RuntimeError(f"the suite's warm folder for session {owner} is not this user's alone: remove it")
        env = {**os.environ, daemon.OWNER_ENV: str(owner)}
        key = place.key(env)
        if not daemon.alive(folder, key):
            daemon.spawn("airctl.cli.warm", folder, key, env)
        deadline = time.monotonic() + START_S
        while (place.state(folder, key) or {}).get("status") != "serving":
            status = place.state(folder, key) or {}
            if status.get("status") == "refused" or time.monotonic() > deadline:
                log = place.files(folder, key)["log"]
                said = log.read_text() if log.exists() else ""
                raise RuntimeError(f"the warm process did not start: {status}; {said}")
            time.sleep(0.05)
        return cls(folder, key)

    @property
    def imports(self) -> dict[str, float]:
        """Seconds its warm-up took: ``cli`` (the CLI's import), ``torch_and_torchair`` (after it)."""
        return dict((place.state(self.folder, self.key) or {}).get("imports") or {})

    def start(self, args: list, cwd: Path, env: dict[str, str], logs: Path, fsize: int | None = None) -> Child | None:
        """``airctl ARGS`` forked with this cwd, env and stdout/stderr files under ``logs``; None where
        the warm process answers that it must run cold."""
        out, err = logs / f"stdout-{time.monotonic_ns()}.txt", logs / f"stderr-{time.monotonic_ns()}.txt"
        limits = client.limits()
        if fsize is not None:
            limits["RLIMIT_FSIZE"] = [fsize, fsize]
        with open(os.devnull, "rb") as i, open(out, "wb") as o, open(err, "wb") as e:
            submitted = client.submit(self.socket, [str(a) for a in args], str(cwd), env,
                                      [i.fileno(), o.fileno(), e.fileno()], limits)
        if isinstance(submitted, str):  # sent back cold; or gone (its key is no longer the install's)
            return None
        return Child(submitted.pid, submitted, None, out, err)

    def shell_command(self) -> str:
        """What a shell script runs as ``airctl`` to have the command forked from here."""
        script = REPO / "airctl" / "pipeline" / "warm" / "client.py"
        return f"{shlex.quote(sys.executable)} -I -S {shlex.quote(str(script))} --or-cold {shlex.quote(self.socket)}"


def start(warm: WarmProcess | None, args: list, cwd: Path, env: dict[str, str], logs: Path, fresh: bool = False,
          fsize: int | None = None) -> Child:
    """``python -m airctl ARGS`` in its own process group: forked from ``warm``, or a fresh interpreter
    when asked (``fresh``), when there is none, or when it answers that the command must run cold;
    ``fsize``: the largest file it may write (``RLIMIT_FSIZE``)."""
    if warm is not None and not fresh:
        forked = warm.start(args, cwd, env, logs, fsize)
        if forked is not None:
            return forked
    out, err = logs / f"stdout-{time.monotonic_ns()}.txt", logs / f"stderr-{time.monotonic_ns()}.txt"

    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen([sys.executable, "-m", "airctl", "--cold", *map(str, args)], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=o, stderr=e, start_new_session=True,
                                preexec_fn=limit if fsize is not None else None)
    return Child(proc.pid, None, proc, out, err)

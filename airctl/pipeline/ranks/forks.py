"""Under sim, every rank is forked from one warm process instead of importing torch and TorchAir again.

Each rank of ``--nproc N`` / ``airctl run torchrun`` is an airctl process that imports torch,
Dynamo and TorchAir before it does anything of its own: about 7 s of CPU each on a 2-core machine,
paid N times at once. Under sim that import is the same in every rank. So the launcher forks one
process, the fork server, before torchrun's agent starts; the server imports it once
(:func:`airctl.backends.warm`). torchrun then starts, for each rank, the warm client that costs
milliseconds (:mod:`airctl.pipeline.warm.client`, run as a file), which passes its standard
streams, working folder and environment over a Unix socket. The server is airctl's one fork
server loop (:mod:`airctl.pipeline.warm.server`, as the console's warm process runs it); it forks
the rank from its warm state, and the rank runs exactly what a fresh worker runs
(:mod:`~airctl.pipeline.ranks.rank_start`): the rank worker module as ``__main__``, in a session of
its own, ending as Python ends (``atexit`` handlers, flushed streams, the same exit code or
signal). What a fresh interpreter would not have inherited is reset
(:func:`airctl.pipeline.warm.child.become`): signal handlers, faulthandler, the random
generators, open files.

Each rank is still a fresh interpreter (as before this module) where forking is not safe or not
possible: a backend that cannot be warmed (``npu``: a device runtime does not survive a fork), a
launcher that already runs other threads (a fork copies locks they hold), a system without
``fork``, descriptor passing or ``pidfd_open``, or ``AIRCTL_RANK_FORKS=0``. The top ledger's
``launcher.ranks_started`` says which, and why.

Only this user's processes can connect (the peer's uid is checked on every connection); the only
program the server forks is the rank worker, for this run's ledger. The socket is in Linux's
abstract namespace (``@airctl-ranks-<uid>-<pid>-<random>``): it has no file, so a launcher killed
with SIGKILL (its server and ranks die with it) leaves nothing behind in ``$TMPDIR`` — a socket
file in a private folder did, one folder per kill.
"""

from __future__ import annotations

import faulthandler
import gc
import importlib
import os
import secrets
import shutil
import signal
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from airctl.errors import AirctlError
from airctl.pipeline.ranks.orphans import die_with_parent
from airctl.pipeline.run import signals
from airctl.pipeline.run.boundary import flush_std_streams

ENV = "AIRCTL_RANK_FORKS"  # "0": every rank a fresh interpreter
CLIENT = Path(__file__).parents[1] / "warm" / "client.py"
# what every rank imports after TorchAir: warm too, so that no rank pays for them
RANK_MODULES = ("airctl.pipeline.run.rank", "airctl.ledger.collectives", "airctl.pipeline.compile.compiler",
                "airctl.pipeline.script.runner", "airctl.pipeline.profile", "torch.distributed")
FORKED = "forked from a warm process (the fork server)"


@dataclass
class Forks:
    """A running fork server: ``pid``, the socket ``address``; :meth:`close` when the ranks ended."""

    pid: int
    address: str  # "@name": abstract (:func:`unix_address`); else a path
    folder: str  # a folder to remove at the end ("": none)
    control: int  # the write end of a pipe the server watches: closed, the server finishes

    def worker_argv(self, top: Path) -> list[str]:
        """What torchrun runs after ``python`` for each rank (its ``--no-python`` form)."""
        return ["-I", "-S", str(CLIENT), self.address, str(top)]

    def __enter__(self) -> Forks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, timeout_s: float = 10.0) -> None:
        """Tell the server to finish once its ranks ended; stop it if it does not."""
        if self.control >= 0:
            os.close(self.control)
            self.control = -1
        deadline = time.monotonic() + timeout_s
        while True:
            pid, _status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                break
            time.sleep(0.02)
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)


def unusable(requested_backend: str) -> str | None:
    """Why the ranks cannot be forked here (None: they can)."""
    if os.environ.get(ENV, "1") == "0":
        return f"{ENV}=0"
    if not (hasattr(os, "fork") and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")):
        return "this system has no fork, pidfd_open or descriptor passing"
    from airctl.backends import choose

    try:
        backend = choose(requested_backend)
    except AirctlError as e:
        return f"the backend could not be chosen ({e.message})"
    if not backend.forkable:
        return f"the {backend.name} backend's processes must start fresh"
    if threading.active_count() != 1:
        return f"the launcher runs {threading.active_count() - 1} other thread(s): a fork would copy locks they hold"
    return None


def start(top: Path, requested_backend: str) -> tuple[Forks | None, str]:
    """The fork server for the run at ``top``, or None; and how the ranks start, for the ledger."""
    why = unusable(requested_backend)
    if why is not None:
        return None, f"fresh interpreters ({why})"
    address = f"@airctl-ranks-{os.getuid()}-{os.getpid()}-{secrets.token_hex(8)}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(unix_address(address))
    except OSError as e:  # no abstract namespace here (not Linux), or the name taken
        listener.close()
        return None, f"fresh interpreters (no socket for the fork server: {e})"
    listener.listen(128)
    read_end, write_end = os.pipe()
    flush_std_streams()
    launcher = os.getpid()
    pid = os.fork()
    if pid == 0:  # the server: never returns into the launcher's frames
        code = 70
        try:
            die_with_parent(launcher)  # a killed launcher takes the server, and so its ranks, with it
            os.close(write_end)
            code = _serve(listener, read_end, top, requested_backend)
        except BaseException:  # noqa: BLE001 - reported, then the process ends here whatever happened
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(read_end)
    listener.close()
    return Forks(pid, address, "", write_end), FORKED


def unix_address(address: str) -> str:
    """The ``AF_UNIX`` address of ``address``: ``@name`` is ``name`` in the abstract namespace."""
    return "\0" + address[1:] if address.startswith("@") else address


def _serve(listener: socket.socket, control: int, top: Path, requested_backend: str) -> int:
    """The rank server, in a session of its own (the terminal's signals reach the launcher and,
    through torchrun, the rank clients, never it): warm, then serve until the launcher closes ``control``."""
    from airctl.pipeline.ranks.rank_start import RankStart
    from airctl.pipeline.warm.child import close_inherited
    from airctl.pipeline.warm.server import serve

    os.setsid()
    signals.forget_after_fork()
    faulthandler.disable()  # the launcher's was aimed at its own ledger's crash file
    close_inherited({listener.fileno(), control, 0, 1, 2})
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    _warm(requested_backend)
    serve(listener, RankStart(str(top)), control=control)
    return 0


def _warm(requested_backend: str) -> None:
    """Import what every rank imports; a failure is left for each rank to meet and report itself."""
    from airctl.backends import warm

    try:
        warm(requested_backend)
        for name in RANK_MODULES:
            importlib.import_module(name)
    except Exception:  # noqa: BLE001, S110 - each rank imports the same and reports the error in its ledger
        pass
    gc.collect()
    gc.freeze()  # the warm heap stays out of the ranks' collections (they would copy every page)

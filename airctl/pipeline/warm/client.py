"""The client of a warm process: hands a command over to it and stands in for it until it ends.

Three callers use it: the console script (``airctl COMMAND``, when a warm process for this install
is listening: :mod:`airctl.pipeline.warm.console`), torchrun for each rank of a forked multi-rank
run (``python -I -S client.py SOCKET LEDGER``: run as a file, the standard library only, so it
starts in milliseconds), and the test suite (:func:`submit` with files of its own for stdio).

What is handed over, so that the command runs as it would have in this process: its arguments,
working folder, environment, umask, resource limits, CPU affinity, nice level and cgroup in one
JSON request (:func:`placement`), and its standard
input, output and error as descriptors (``SCM_RIGHTS``; a terminal stays a terminal). Then the
client stands in for the command:

- every signal it gets (Ctrl-C's SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2, a resized terminal's
  SIGWINCH, SIGCONT) goes on to the command's process group; Ctrl-Z (SIGTSTP) stops the command,
  then the client;
- it exits as the command exited: the same code, or killed by the same signal.

The server answers a request with ``{"pid"}`` (the command runs), ``{"fresh": reason}`` (it cannot
be run warm: this process runs it itself, cold) or ``{"error"}``; then ``{"exit"}`` when it ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import time

FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH", "SIGCONT")
LIMITS = ("RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_STACK", "RLIMIT_AS", "RLIMIT_DATA",
          "RLIMIT_CPU", "RLIMIT_NPROC")
IGNORABLE = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
ANSWER_S = 120.0  # how long a started server may take to warm up before the client runs the command cold
WHO = "airctl warm client"


def stdio() -> list[int]:
    """Descriptors 0, 1 and 2 to hand over; one that is closed here becomes /dev/null."""
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            fds.append(os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY))
    return fds


def limits() -> dict[str, list[int]]:
    """This process's resource limits (``ulimit``), which a cold command would have inherited."""
    return {name: list(resource.getrlimit(getattr(resource, name))) for name in LIMITS if hasattr(resource, name)}


def placement() -> dict[str, object]:
    """Where this process runs (``taskset``, ``nice``, its cgroup): a cold command would run there."""
    out: dict[str, object] = {}
    if hasattr(os, "sched_getaffinity"):
        out["affinity"] = sorted(os.sched_getaffinity(0))
    with contextlib.suppress(OSError):
        out["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
    with contextlib.suppress(OSError), open("/proc/self/cgroup", encoding="utf-8") as f:
        out["cgroup"] = f.read(4096)
    return out


def ignored_signals() -> list[str]:
    """The signals this process ignores (``nohup``, a background job): a cold command would too."""
    return [name for name in IGNORABLE
            if hasattr(signal, name) and signal.getsignal(getattr(signal, name)) is signal.SIG_IGN]


def interpreter() -> dict[str, object]:
    """What of this interpreter's start a command's behaviour may depend on (``python -O``, ``-W``, ``-X``)."""
    flags = sys.flags
    return {"executable": os.path.realpath(sys.executable), "optimize": flags.optimize,
            "warnoptions": list(sys.warnoptions), "xoptions": {str(k): str(v) for k, v in sys._xoptions.items()},
            "dev_mode": flags.dev_mode, "utf8_mode": flags.utf8_mode, "bytes_warning": flags.bytes_warning}


class Submitted:
    """A command the server runs: ``pid`` (its process group too); :meth:`wait` for how it ended."""

    def __init__(self, pid: int, sock: socket.socket, buffer: bytes) -> None:
        self.pid, self.sock, self.buffer = pid, sock, bytearray(buffer)
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        """The exit code (negative: the signal that ended it); TimeoutError past ``timeout`` s."""
        if self.returncode is None:
            message = _next(self.sock, self.buffer, timeout)
            if message is None or "exit" not in message:
                raise ConnectionError("the warm process went away before the command ended")
            self.returncode = int(message["exit"])
            self.sock.close()
        return self.returncode

    def close(self) -> None:
        """Give up the command: the server kills it (nothing it runs outlives its client)."""
        self.sock.close()


def submit(address: str, argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None,
           fds: list[int] | None = None, rlimits: dict[str, list[int]] | None = None,
           answer_s: float = ANSWER_S, argv0: str | None = None, path0: str | None = None,
           ignored: list[str] | None = None) -> Submitted | str:
    """Ask the server at ``address`` to run ``argv`` (what ``sys.argv`` would be) with this cwd, env
    and stdio (default: this process's); ``argv0``, ``path0``: ``sys.argv[0]`` and ``sys.path[0]``
    (default: the server's choice); ``ignored``: the signals this process ignores (default: as now).
    The running command, or why it must run cold here."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    request = {"argv": [str(a) for a in argv], "argv0": argv0, "cwd": cwd or os.getcwd(),
               "env": dict(os.environ if env is None else env), "umask": _umask(),
               "limits": limits() if rlimits is None else rlimits, "interpreter": interpreter(), "path0": path0,
               "ignored": ignored_signals() if ignored is None else ignored, **placement()}
    body = json.dumps(request).encode()
    try:
        sock.connect("\0" + address[1:] if address.startswith("@") else address)  # "@name": abstract
        socket.send_fds(sock, [struct.pack("!I", len(body))], stdio() if fds is None else fds)
        sock.sendall(body)
        buffer = bytearray()
        message = _next(sock, buffer, answer_s)
    except (OSError, TimeoutError, ValueError) as e:
        sock.close()
        return f"the warm process at {address} did not answer ({e})"
    if message is None or "pid" not in message:
        sock.close()
        if message is None:
            return "the warm process went away"
        return str(message.get("fresh") or message.get("error") or message)
    return Submitted(int(message["pid"]), sock, bytes(buffer))


ENDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def relay(address: str, argv: list[str], argv0: str | None = None, path0: str | None = None,
          ending: list[int] | None = None) -> int | str:
    """Run ``argv`` (``sys.argv[1:]``) in the server at ``address`` with this process's everything, forwarding signals
    until it ends: its exit code (negative: the signal that ended it), or why it must run cold here. ``ending``:
    where SIGINT, SIGTERM and SIGHUP are noted; the handler that notes them stays in place once the command
    has run, so the caller finds one that came after this returned."""
    pending: list[int] = []
    command: list[Submitted] = []
    ending = [] if ending is None else ending  # SIGINT, SIGTERM, SIGHUP received: the caller asked the command to end

    def forward(signum: int, _frame: object) -> None:
        if signum in ENDING:
            ending.append(signum)
        if not command:
            pending.append(signum)
            return
        pid = command[0].pid
        try:
            if signum == signal.SIGTSTP:  # Ctrl-Z: the command stops, then this process, as a shell expects
                os.killpg(pid, signal.SIGSTOP)
                signal.signal(signal.SIGTSTP, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGTSTP)
                signal.signal(signal.SIGTSTP, forward)
            else:
                try:
                    os.killpg(pid, signum)
                except ProcessLookupError:  # just forked: not yet in a group of its own. The server holds
                    os.kill(pid, signum)  # these signals across the fork, so it meets them once it can
        except (ProcessLookupError, PermissionError):
            pass

    ignored = ignored_signals()
    previous = {}
    for name in (*FORWARDED, "SIGTSTP"):
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, forward)
    try:
        submitted = submit(address, argv, argv0=argv0, path0=path0, ignored=ignored)
        if isinstance(submitted, str):
            return submitted
        command.append(submitted)
        for signum in pending:
            if signum != signal.SIGCONT:
                forward(signum, None)
        try:
            code = submitted.wait()
        except ConnectionError as e:
            if _ended_with_server(submitted.pid):  # the warm process died: its children get SIGTERM
                print(f"{WHO}: the warm process went away; the command was ended (SIGTERM)", file=sys.stderr)
                return 128 + signal.SIGTERM
            print(f"{WHO}: {e}", file=sys.stderr)
            return 1
        if ending and code >= 0 and code not in (128 + sig for sig in ENDING):
            # the signal came as the command was ending, too late for it: as cold, never an exit 0
            word = "interrupted" if ending[0] == signal.SIGINT else f"terminated by {signal.Signals(ending[0]).name}"
            with contextlib.suppress(OSError, ValueError):
                print(f"error: {word}", file=sys.stderr, flush=True)
            return 128 + ending[0]
        return code
    finally:
        if not command:  # run cold here: with this process's own handlers again
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            for signum in pending:  # a signal that came before the server answered is this process's now
                os.kill(os.getpid(), signum)


def _ended_with_server(pid: int, wait_s: float = 30.0) -> bool:
    """Whether the command ``pid`` ended (or ends within ``wait_s``) after its warm process died:
    the child gets SIGTERM then (``PR_SET_PDEATHSIG``) and ends as a terminated command."""
    try:
        if os.stat(f"/proc/{pid}").st_uid != os.getuid() or os.getpgid(pid) != pid:
            return False  # not a command a warm process of ours forked
        fd = os.pidfd_open(pid)
    except (OSError, AttributeError):
        return True  # gone already
    try:
        return bool(select.select([fd], [], [], wait_s)[0])
    finally:
        os.close(fd)


def exit_as(code: int) -> int:
    """Exit as the command did: ``code``, or (negative) die of the same signal."""
    if code >= 0:
        return code
    for stream in (sys.stdout, sys.stderr):  # boundary.flush_std_streams: this file runs without airctl
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if -code not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
    return 128 - code  # a signal that does not end a process by default


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _next(sock: socket.socket, buffer: bytearray, timeout: float | None) -> dict | None:
    """The next message (one JSON line); None when the server closed first; TimeoutError past ``timeout``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while b"\n" not in buffer:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            ready = select.select([sock], [], [], left)[0]
        except InterruptedError:
            continue
        if not ready:
            raise TimeoutError(f"no answer within {timeout} s")
        chunk = sock.recv(1 << 16)
        if not chunk:
            return None
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return json.loads(line)


def main(argv: list[str]) -> int:
    """``client.py [--or-cold] SOCKET ARGS...``: ARGS run by the server at SOCKET (torchrun's rank, a
    shell script's ``$AIRCTL``). Where the server sends it back cold, or (``--or-cold``) cannot be
    reached, ``python -m airctl ARGS`` here instead; else the reason, and exit 1."""
    or_cold = bool(argv) and argv[0] == "--or-cold"
    argv = argv[1:] if or_cold else argv
    if len(argv) < 2:
        print(f"usage: {WHO}: client.py [--or-cold] SOCKET ARGS...", file=sys.stderr)
        return 2
    address, args = argv[0], argv[1:]
    if not or_cold:  # a rank's client, torchrun's child: it dies with the launcher (its command with it)
        _die_with_parent(os.getppid())
    code = relay(address, args)
    if isinstance(code, str):
        if not (or_cold or code.startswith("cold:")):
            print(f"{WHO}: {code}", file=sys.stderr)
            return 1
        os.execv(sys.executable, [sys.executable, "-m", "airctl", *args])
    return exit_as(code)


def _die_with_parent(parent: int) -> None:
    """SIGKILL when the parent (torchrun's agent, in the launcher) dies, as every rank process asks
    (``airctl.pipeline.ranks.orphans.die_with_parent``; this file imports no airctl)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        if ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
            return
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the request took: go now
        os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

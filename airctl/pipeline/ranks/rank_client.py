"""What torchrun starts for each rank when the ranks are forked: ``python -I -S rank_client.py SOCKET LEDGER``.

torchrun's agent starts, watches and stops one process per rank. When
:mod:`airctl.pipeline.ranks.forks` serves the ranks, that process is this small one (the standard
library only, run as a file, so it starts in milliseconds): it hands its standard streams, working
folder and environment to the fork server at SOCKET, which forks the warm rank; then it stands in
for that rank towards torchrun:

- every signal it gets (torchrun's SIGTERM when a peer failed, a SIGINT) goes on to the rank's
  process group, as torchrun's ``killpg`` would have reached the rank;
- it exits as the rank exited: the same code, or killed by the same signal.

If the fork server goes away before the rank ended, it says so and exits 1 (the server kills a rank
whose client went away, so a rank never outlives what torchrun watches).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
WHO = "airctl rank client"


def _stdio() -> list[int]:
    """Descriptors 0, 1 and 2 to hand over; one that is closed here becomes /dev/null."""
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            fds.append(os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY))
    return fds


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(f"usage: {WHO}: rank_client.py SOCKET LEDGER  (started by torchrun for airctl)", file=sys.stderr)
        return 2
    address, args = argv[0], argv[1:]
    _die_with_parent(os.getppid())
    rank: list[int] = []  # the forked rank's pid, once the server told it
    early: list[int] = []  # signals that came before it

    def forward(signum: int, _frame: object) -> None:
        if not rank:
            early.append(signum)
            return
        try:
            os.killpg(rank[0], signum)
        except (ProcessLookupError, PermissionError):
            pass

    for name in FORWARDED:
        signal.signal(getattr(signal, name), forward)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(address)
        body = json.dumps({"argv": args, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        socket.send_fds(sock, [struct.pack("!I", len(body))], _stdio())
        sock.sendall(body)
    except OSError as e:
        print(f"{WHO}: cannot reach airctl's rank fork server at {address}: {e}", file=sys.stderr)
        return 1
    for line in sock.makefile("rb"):
        message = json.loads(line)
        if "error" in message:
            print(f"{WHO}: {message['error']}", file=sys.stderr)
            return 1
        if "pid" in message:
            rank.append(int(message["pid"]))
            for signum in early:
                forward(signum, None)
        elif "exit" in message:
            return _exit_as(int(message["exit"]))
    print(f"{WHO}: the rank fork server went away before the rank ended", file=sys.stderr)
    return 1


def _die_with_parent(parent: int) -> None:
    """SIGKILL when torchrun's agent (the launcher) dies, as every rank process asks
    (``airctl.pipeline.ranks.orphans.die_with_parent``; this file imports no airctl)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        if ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
            return
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)


def _exit_as(code: int) -> int:
    """Exit as the rank did: ``code``, or (negative) die of the same signal."""
    if code >= 0:
        return code
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
    return 128 - code  # a signal that does not end a process by default


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

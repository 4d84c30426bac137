"""``python -m tests.zygote_connect SOCKET ARGS...``: ``airctl ARGS`` forked from a running zygote.

Some tests run airctl the way a user's shell does, through a script they do not control
(``bash run.sh`` of a reproducer runs ``exec $AIRCTL ...``). Set ``AIRCTL`` to this command and
the zygote (tests/zygote.py) forks the command instead of a fresh interpreter importing torch and
TorchAir again. The connecting process hands over its stdin, stdout and stderr (``SCM_RIGHTS``),
its working folder and environment; it forwards SIGINT, SIGTERM and SIGHUP to the command's
process group, and ends as the command ended: its exit code, or killed by the same signal. An
environment that changes what torch reads at import gets a fresh ``python -m airctl`` instead, as
:func:`tests.zygote.start` decides.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

ENV = "AIRCTL_TEST_ZYGOTE_SOCKET"  # set in the zygote's environment: where it listens
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def listen(path: str) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)
    return listener


def accept(listener: socket.socket) -> tuple[socket.socket, dict]:
    """A caller's request: ``args``, ``cwd``, ``env`` and ``fds`` (its stdin, stdout, stderr). A caller
    that sends something else, or nothing for 10 s, is closed on (OSError or ValueError raised)."""
    conn, _ = listener.accept()
    conn.settimeout(10)  # a caller that sends nothing must not hold the zygote up: every caller waits on it
    fds: list[int] = []
    try:
        data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        while not data.endswith(b"\n"):
            chunk = conn.recv(1 << 20)
            if not chunk:
                break
            data += chunk
        request = json.loads(data)
        if not isinstance(request, dict) or not ({"args", "cwd", "env"} <= request.keys() or "ping" in request):
            raise ValueError(f"not a request: {data[:200]!r}")
    except (OSError, ValueError):
        for fd in fds:
            os.close(fd)
        conn.close()
        raise
    conn.settimeout(None)
    request["fds"] = fds
    return conn, request


def tell(conn: socket.socket, message: dict) -> None:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
    except OSError:  # the caller is gone: its command goes on
        pass


def main(path: str, args: list[str]) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    request = json.dumps({"args": args, "cwd": os.getcwd(), "env": dict(os.environ)}).encode() + b"\n"
    socket.send_fds(conn, [request], [0, 1, 2])
    stream = conn.makefile("r")
    answer = json.loads(stream.readline())
    if "fresh" in answer:  # the zygote imported torch with other values of these variables
        conn.close()
        os.execv(sys.executable, [sys.executable, "-m", "airctl", *args])
    pid = int(answer["pid"])
    for signum in FORWARDED:
        signal.signal(signum, lambda s, _f: os.killpg(pid, s))
    line = stream.readline()
    if not line:
        raise SystemExit(f"zygote_connect: the zygote ended before {args}")
    code = int(json.loads(line)["returncode"])
    if code < 0:  # killed by a signal: end the same way, as a shell would see it
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2:]))

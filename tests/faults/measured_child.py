"""Run ARGV as a child and write its exit status, peak RSS and peak own memory (KiB) to OUT, as one JSON line.

Why a go-between: a process's peak RSS (``ru_maxrss``) survives ``exec``, so a child forked straight
from a pytest worker that has torch imported starts with the worker's ~600 MB to its name before it
runs a line of airctl. This small interpreter forks the measured command from itself, so the figure
is the command's own. It passes SIGINT and SIGTERM on to the command.

    python measured_child.py OUT ARGV...
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def main() -> int:
    out, argv = sys.argv[1], sys.argv[2:]
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, _f: os.kill(pid, s))
    own = 0  # the peak of its anonymous and shared memory, sampled (below)
    while True:
        try:
            done, status, usage = os.wait4(pid, os.WNOHANG)
        except InterruptedError:
            continue
        if done:
            break
        own = max(own, _own_kb(pid))
        time.sleep(0.01)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"code": os.waitstatus_to_exitcode(status), "maxrss_kb": usage.ru_maxrss, "own_kb": own}, f)
    return 0


def _own_kb(pid: int) -> int:
    """RssAnon + RssShmem of ``pid``: the memory the command allocated. Its peak RSS also counts the
    pages of its libraries' files that are resident (torch's code: 77 MB in one install, 119 MB in a
    fresh install of the same files, from the page cache's state alone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            return sum(int(line.split()[1]) for line in f if line.startswith(("RssAnon:", "RssShmem:")))
    except (OSError, ValueError):
        return 0


if __name__ == "__main__":
    sys.exit(main())

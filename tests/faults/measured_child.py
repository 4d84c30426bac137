"""Run ARGV as a child and write its exit status and peak RSS (KiB) to OUT, as one JSON line.

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
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"code": os.waitstatus_to_exitcode(status), "maxrss_kb": usage.ru_maxrss}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())

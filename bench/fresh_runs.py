"""Time a whole ``airctl`` command the way users run it: the console script, a fresh process each run.

Used by the diff and verifier benches beside their in-process figures: a user waits for Python's
start, the CLI's imports, the reads, the work and the printing, and that is the figure the targets
name. Each run's wall time is paired with its CPU time (the child's user + system seconds, from
``getrusage``): on a shared host the wall time also counts other processes' turns, the CPU time
much less. ``AIRCTL_WARM=0``: ``diff`` and ``check`` of graph files never go through the warm
process (it serves commands that import torch), so no warm process is started for them either.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

AIRCTL = str(Path(sys.executable).with_name("airctl"))  # the venv's console script, as users run it


@dataclass
class Runs:
    walls: list[float]
    cpus: list[float]
    codes: list[int]

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)

    def __str__(self) -> str:
        return (f"median {self.wall:.2f} s wall, {self.cpu:.2f} s CPU "
                f"(walls {', '.join(f'{w:.2f}' for w in self.walls)})")


def whole_command(args: list[str], runs: int, ok_codes: tuple[int, ...] = (0,), checkout: str | None = None) -> Runs:
    """``airctl ARGS`` run ``runs`` times, each a fresh process, output to /dev/null; ``checkout``: with
    that folder's airctl (an earlier commit's worktree, first on ``PYTHONPATH``) instead of this one's."""
    env = dict(os.environ, AIRCTL_WARM="0", TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (checkout, os.environ.get("PYTHONPATH")) if p)
    walls, cpus, codes = [], [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([AIRCTL, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        codes.append(proc.returncode)
        if proc.returncode not in ok_codes:
            raise SystemExit(f"airctl {' '.join(args)} exited {proc.returncode}:\n{proc.stderr.decode()[-2000:]}")
    return Runs(walls, cpus, codes)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (5 min {five:.2f}) on {os.cpu_count()} cores"


def take_flags(args: list[str], defaults: dict[str, int | None]) -> tuple[dict[str, int | str | None], set[str]]:
    """Each ``--name VALUE`` of ``defaults`` taken out of ``args``: the values by name (an int where the
    default is one or None for a flag whose default is None, then the text), and the names given."""
    values: dict[str, int | str | None] = dict(defaults)
    given: set[str] = set()
    for name, default in defaults.items():
        flag = "--" + name
        if flag in args:
            at = args.index(flag)
            value = args[at + 1]
            del args[at:at + 2]
            values[name] = value if default is None else int(value)
            given.add(name)
    return values, given

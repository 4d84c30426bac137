"""Whether a forked child can be the process its caller would have started, else ``{"fresh"}``.

Besides the program's own reasons (``Program.cold``), the caller's resource limits, CPU affinity,
nice level and cgroup limits must be ones the child can take: a hard limit above the warm
process's, a nice level below it (only raising one needs no privilege), CPUs it may not use, or a
cgroup whose limits differ from the warm process's (:func:`cgroup_limits`: the tightest memory,
CPU and process-count limits along its chain; a fork would escape them) make the answer
``{"fresh"}``, and the caller runs the command cold under its own. Another cgroup with the same
limits (another terminal's session scope) is served warm. The child takes the rest
(:func:`airctl.pipeline.warm.child.become`): a warm command runs under ``taskset`` and ``nice`` as
a cold one would.
"""

from __future__ import annotations

import math
import os
import resource
from pathlib import Path, PurePosixPath
from typing import Any

ROOT = "/sys/fs/cgroup"  # a str: module-level values stay immutable literals


def decide(program: Any, request: dict[str, Any]) -> dict[str, str] | None:
    """The answer that is not a fork, or None to fork."""
    error = program.refuse(request)
    if error is not None:
        return {"error": error}
    why = program.cold(request) or _limits_out_of_reach(request.get("limits") or {}) or _out_of_reach(request)
    if why is not None:
        return {"fresh": f"cold: {why}"}
    return None


def _limits_out_of_reach(limits: dict[str, list[int]]) -> str | None:
    """A resource limit the caller has and the child could not take (a hard limit above ours)."""
    for name, (_soft, hard) in limits.items():
        which = getattr(resource, str(name), None)
        if which is None:
            continue
        ours = resource.getrlimit(which)[1]
        if ours != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or hard > ours):
            return f"the caller's {name} is above the warm process's"
    return None


def _out_of_reach(request: dict[str, Any]) -> str | None:
    """Why the child could not run as the caller's process would: a nice level below ours (only
    raising it needs no privilege), CPUs outside ours, another cgroup (its limits)."""
    nice = request.get("nice")
    if isinstance(nice, int) and nice < os.getpriority(os.PRIO_PROCESS, 0):
        return "the caller's nice level is below the warm process's"
    cpus = request.get("affinity")
    if isinstance(cpus, list) and hasattr(os, "sched_getaffinity") and not set(cpus) <= os.sched_getaffinity(0):
        return "the caller may use CPUs the warm process may not"
    group, ours = request.get("cgroup"), cgroup()
    if isinstance(group, str) and group != ours and cgroup_limits(group) != cgroup_limits(ours):
        return "the caller's cgroup sets other limits (memory, CPU or processes) than the warm process's"
    return None


def cgroup() -> str | None:
    """This process's cgroup(s), as ``/proc/self/cgroup`` says (None: not known)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            return f.read(4096)
    except OSError:
        return None


def cgroup_limits(text: str | None, root: Path | None = None) -> tuple[float, float, float] | None:
    """The tightest (memory bytes, CPUs, processes) limits along the cgroups of a ``/proc/PID/cgroup``
    text, cgroup v2 or v1 (``inf``: none), under ``root`` (default :data:`ROOT`); None when the text
    is not known."""
    if text is None:
        return None
    root = Path(ROOT) if root is None else root
    mem = cpu = pids = math.inf
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and not controllers:
            base = root if (root / "cgroup.controllers").exists() else root / "unified"
            for folder in _chain(base, path):
                mem = min(mem, _number(_read(folder / "memory.max")))
                cpu = min(cpu, _ratio(_read(folder / "cpu.max")))
                pids = min(pids, _number(_read(folder / "pids.max")))
            continue
        for name in controllers.split(","):
            for folder in _chain(root / name, path) if name in ("memory", "cpu", "pids") else ():
                if name == "memory":
                    mem = min(mem, _number(_read(folder / "memory.limit_in_bytes"), big=1 << 62))
                elif name == "cpu":
                    quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
                    cpu = min(cpu, _ratio(f"{quota} {period}" if quota and period else None))
                else:
                    pids = min(pids, _number(_read(folder / "pids.max")))
    return mem, cpu, pids


def _chain(base: Path, path: str) -> list[Path]:
    """``base/path`` and each folder above it up to ``base``."""
    at = PurePosixPath("/" + path.strip().lstrip("/"))
    out = [base / str(at).lstrip("/")]
    while at != at.parent:
        at = at.parent
        out.append(base / str(at).lstrip("/"))
    return out


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="ascii") as f:
            return f.read(256).strip()
    except (OSError, ValueError):
        return None


def _number(text: str | None, big: float = math.inf) -> float:
    """A limit's value (``max``, ``-1``, missing or at least ``big``: none)."""
    try:
        value = float(text) if text not in (None, "max") else math.inf
    except ValueError:
        return math.inf
    return math.inf if value < 0 or value >= big else value


def _ratio(text: str | None) -> float:
    """CPUs a ``QUOTA PERIOD`` pair allows (``max``/``-1``: none)."""
    quota, _, period = (text or "").partition(" ")
    q, p = _number(quota), _number(period)
    return q / p if math.isfinite(q) and math.isfinite(p) and p > 0 else math.inf

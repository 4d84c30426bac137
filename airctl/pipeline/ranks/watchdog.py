"""The launcher's watchdog: stop a multi-rank run whose ranks hang in a collective, and say where.

A rank that waits for a collective its peers never issue blocks inside the collective library.
Under sim the process groups get a default timeout (``--collective-timeout``), after which gloo
raises and the run ends by itself; the watchdog is for what that does not cover (a script that
sets its own long timeout, a rank blocked in C++ that never returns). It follows every rank's
collective log (:class:`~airctl.ledger.collectives.LogFollower`) and, once a rank has been blocked
in one collective for ``limit_s``, it:

1. writes down where every rank was last seen (graph, node, op, stream, collective, for how long);
2. stops the ranks: SIGTERM to each worker process (its ledger then ends ``interrupted``), and
   SIGKILL ``grace_s`` later to those still there (a rank blocked in C++ never runs its handler).

Only processes whose pid a rank wrote into its ledger and whose parent is this process (or the
fork server it started, :mod:`~airctl.pipeline.ranks.forks`) are signalled. torchrun's agent then
sees the workers gone and returns.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airctl.ledger.collectives import LOG_FILE, LogFollower
from airctl.ledger.liveness import proc_stat
from airctl.ledger.reader import Ledger


class Watchdog:
    def __init__(self, top: Path, limit_s: float, say: Callable[[str], None], grace_s: float = 3.0,
                 poll_s: float = 0.5, parents: set[int] | None = None) -> None:
        self.top = top
        self.parents = {str(p) for p in (parents or {os.getpid()})}
        self.limit_s = limit_s
        self.grace_s = grace_s
        self.poll_s = poll_s
        self.say = say
        self.followers: dict[int, LogFollower] = {}  # one per rank folder, as they appear
        self.fired: str | None = None  # the message, once it stopped the run
        self.last_seen: dict[int, dict[str, Any] | None] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="airctl-watchdog", daemon=True)

    def __enter__(self) -> Watchdog:
        if self.limit_s > 0:
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.grace_s + 5)

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_s):
            for folder in (self.top / "ranks").glob("*"):
                if folder.name.isdigit() and int(folder.name) not in self.followers:
                    self.followers[int(folder.name)] = LogFollower(folder / LOG_FILE)
            now = time.time()
            seen = {r: f.poll().last(now) for r, f in self.followers.items()}
            stuck = {r: s for r, s in seen.items() if s and s.get("state") == "blocked"
                     and s.get("since_s", 0) > self.limit_s}
            if stuck:
                self.last_seen = seen
                r, s = min(stuck.items(), key=lambda kv: -kv[1]["since_s"])
                self.fired = (f"watchdog: rank {r} has been blocked in {s.get('describe') or s.get('op')} for "
                              f"{s['since_s']:.0f} s (limit {self.limit_s:g} s); stopping every rank")
                self.say(self.fired)
                for rank, where in sorted(seen.items()):
                    self.say(f"  rank {rank}: {describe_last(where)}")
                self._stop_ranks()
                return

    def _stop_ranks(self) -> None:
        pids = [pid for pid in (self._pid(r) for r in sorted(self.followers)) if pid is not None]
        for pid in pids:
            _signal_child(pid, signal.SIGTERM, self.parents)
        deadline = time.time() + self.grace_s
        while time.time() < deadline and any(_alive(pid, self.parents) for pid in pids):
            time.sleep(0.1)
        for pid in pids:
            if _alive(pid, self.parents):
                _signal_child(pid, signal.SIGKILL, self.parents)

    def _pid(self, rank: int) -> int | None:
        folder = self.top / "ranks" / str(rank)
        if not Ledger.is_ledger(folder):
            return None
        try:
            return Ledger.open(folder).index.pid
        except Exception:  # noqa: BLE001 - a rank ledger being rewritten: no pid this time
            return None


def describe_last(where: dict[str, Any] | None) -> str:
    """One line: where a rank was last seen (``RankActivity.last``)."""
    if not where:
        return "no collective logged (it never reached a compiled graph's collective)"
    name = where.get("graph")
    graph = "no graph" if not name else name if " of " in name else f"graph {name}"
    if where.get("state") in ("blocked", "ended while blocked"):
        since = f" for {where['since_s']:.1f} s" if "since_s" in where else ""
        return (f"{where['state']} in {graph}, op {where.get('node')} ({where.get('op')}) on stream "
                f"{where.get('stream') or 'eager'}{since} — collective #{where.get('collective')}: "
                f"{where.get('describe')}")
    last = f"; last collective #{where['collective']}: {where.get('describe')}" if "collective" in where else ""
    return f"{where.get('state')}, last {graph}{last}"


def _child_state(pid: int, parents: set[str]) -> str | None:
    """``pid``'s state (``Z``: ended, not yet reaped) when ``parents`` holds its parent, else None."""
    fields = proc_stat(pid) or []
    return fields[0] if len(fields) > 1 and fields[1] in parents else None


def _alive(pid: int, parents: set[str]) -> bool:
    return _child_state(pid, parents) not in (None, "Z")


def _signal_child(pid: int, signum: int, parents: set[str]) -> None:
    if _child_state(pid, parents) is not None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

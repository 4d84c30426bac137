"""Never hang: a plan that can never finish is refused before it runs, or stopped when it stalls.

- **before running** (:func:`check_plan`): a wait that refers to a later node is handed to the
  verifier's cycle check (rule ``deadlock_cycle``); a cycle raises :class:`StreamDeadlock`;
- **while running** (:func:`await_deps`, :func:`check_stuck`): the moment every unfinished
  stream is blocked the run stops, and any single wait longer than ``timeout_s`` stops it too.

Either way an :class:`~airctl.errors.AirctlError` names each blocked node and what it waits for,
or the node a stream is running. The functions work on one call's
:class:`~airctl.execute.run_state.RunState`; those marked so are called with ``st.cond`` held.
"""

from __future__ import annotations

import time
from typing import Any

from airctl.errors import AirctlError
from airctl.execute.run_state import Abort, RunState
from airctl.execute.schedule import Schedule, stream_word
from airctl.graph.model import split_source
from airctl.graph.roles import Role


class StreamDeadlock(AirctlError):
    """The streams of a graph wait on each other (or one waits too long)."""


def check_plan(gm: Any, sched: Schedule, name: str) -> None:
    """Raise :class:`StreamDeadlock` when a forward wait of ``sched`` closes a cycle (static)."""
    forward = [(it, j) for it in sched.items for j in it.deps if j > it.index]
    if not forward:
        return
    from airctl.io.fx_reader import read_fx
    from airctl.verify.cycles import deadlock_findings, fx_dependencies
    from airctl.verify.plan import build_plan

    graph = read_fx(gm, name)
    plan = build_plan(graph, sched.mode)
    findings = deadlock_findings(graph, fx_dependencies(graph, plan.stream), sched.mode)
    if not findings:
        return
    f = findings[0]
    it, j = forward[0]
    file, line = split_source(it.source)
    raise StreamDeadlock(
        f"{name}: the stream plan deadlocks (verifier rule deadlock_cycle): {f.message}; "
        f"{sched.describe(it.index)} waits for {sched.describe(j)}, which comes after it",
        node=it.name, file=file, line=line,
        hint="a pass put a wait before the record it waits for; move the wait after the record "
             "(run `airctl check` on the ledger's fx stages to see where it appeared)")


def await_deps(st: RunState, s: int, i: int, deps: list[int]) -> None:
    """Block stream ``s`` (about to run node ``i``) until ``deps`` are done; raise :class:`Abort`
    when the run was stopped meanwhile (another stream failed, a deadlock, the timeout)."""
    done = st.done
    if all(done[j] for j in deps):
        if st.aborted:
            raise Abort()
        return
    deadline = time.monotonic() + st.timeout_s
    with st.cond:
        st.blocked[s] = (i, deps)
        st.running.pop(s, None)
        try:
            check_stuck(st)
            while not st.aborted and not all(done[j] for j in deps):
                left = deadline - time.monotonic()
                if left <= 0:
                    stop(st, "timeout", s)
                    break
                st.cond.wait(left)
        finally:
            st.blocked.pop(s, None)
        if st.aborted:
            raise Abort()


def check_stuck(st: RunState) -> None:
    """With ``st.cond`` held: stop the run when every unfinished stream is blocked."""
    if st.aborted:
        return
    live = [s for s in range(len(st.sched.streams)) if s not in st.finished]
    if not live:
        return
    for s in live:
        b = st.blocked.get(s)
        if b is None or all(st.done[j] for j in b[1]):
            return
    stop(st, "deadlock", live[0])


def stop(st: RunState, why: str, s: int) -> None:
    """With ``st.cond`` held: abort with a message naming every blocked node (``why``: deadlock |
    timeout; ``s`` is the stream whose node the error points at)."""
    sched = st.sched
    lines = []
    first: int | None = None
    for sid in range(len(sched.streams)):
        b = st.blocked.get(sid)
        if b is not None:
            i, deps = b
            first = i if first is None or sid == s else first
            missing = [j for j in deps if not st.done[j]]
            what = "; ".join(_waits_for(st, j) for j in missing)
            lines.append(f"{sched.describe(i)} waits for {what}")
        elif sid in st.running:
            lines.append(f"{stream_word(sched.streams[sid])} is running {sched.describe(st.running[sid])}")
    if why == "deadlock":
        head = f"{st.name}: deadlock: every unfinished stream is waiting, and none can go on"
        hint = ("a wait that waits for a record which only runs after it (on its own stream, or on a stream that "
                "itself waits): move the wait after its record; `airctl check` names the cycle")
    else:
        head = f"{st.name}: a stream waited more than {st.timeout_s:g} s"
        hint = "raise the timeout if the graph is this slow; otherwise the waited-for node never finishes"
    it = sched.items[first] if first is not None else None
    file, line = split_source(it.source if it else None)
    err = StreamDeadlock(head + ":\n  " + "\n  ".join(lines), node=it.name if it else None, file=file, line=line,
                         hint=hint)
    if st.error is None:
        st.error = err
    st.aborted = True
    st.cond.notify_all()


def _waits_for(st: RunState, j: int) -> str:
    sched = st.sched
    it = sched.items[j]
    kind = "record" if it.role in (Role.RECORD, Role.TAGGED_RECORD) else "node"
    state = "running now" if st.running.get(it.stream) == j else "not run yet"
    return f"{kind} {sched.describe(j)} ({state})"

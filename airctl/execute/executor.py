"""Run an FX graph on several streams at once and check its synchronisation while it runs.

On the CPU every stream is a thread (the default stream is the calling thread; side streams run
on a :class:`~airctl.execute.pool.WorkerPool`) that runs its nodes in graph order; torch ops
release the GIL, so two streams' matmuls really overlap. ``threads_per_stream`` sets each
thread's intra-op thread count for the run.

Two kinds of waiting happen, and only one of them is an ordering the device would give:

- **emulation waits** (``Item.deps``): a node never starts before the cross-stream inputs it
  reads exist, so the outputs always equal eager PyTorch, racy plan or not;
- **syncs** (``Item.syncs``): record/wait, TorchAir's fork/join closure events, and in
  max-autotune GE's synchronised data edges. Only these merge vector clocks.

This module is the run loop: the per-stream workers, the serial loop and what each node does.
The race checks live in :mod:`~airctl.execute.hazards`, the deadlock and timeout watch in
:mod:`~airctl.execute.deadlock`, one call's shared state in :mod:`~airctl.execute.run_state`.

Where a run reports is explicit: the :class:`~airctl.execute.recorder.Recorder` given as
``recorder`` (its owner may set the attribute between runs). With none, races are logged as
warnings, once per race. A multi-rank run also gives a ``collectives`` log
(:class:`~airctl.ledger.collectives.CollectiveLog`): each collective node is written there before
it is issued and again when it returned, each ``wait_tensor`` on one around its wait, and each
run of the graph at its start and end, so a rank that hangs in a collective can be named.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import threading
import time
from collections.abc import Sequence
from typing import Any

from airctl.errors import AirctlError
from airctl.execute import deadlock, hazards
from airctl.execute.deadlock import StreamDeadlock
from airctl.execute.pool import Job, WorkerPool
from airctl.execute.recorder import Sink, log
from airctl.execute.run_state import Abort, RunState, Stamp
from airctl.execute.schedule import build_schedule
from airctl.execute.timeline import OpEvent, SyncEdge
from airctl.graph.roles import Role
from airctl.ledger.collectives import CollectiveLog, call_details
from airctl.modes import Mode

__all__ = ["DEFAULT_TIMEOUT_S", "STREAM_MARK", "Stamp", "StreamDeadlock", "StreamExecutor"]

STREAM_MARK = "airctl.stream::"  # record_function name prefix around each op run serially (profiler on)

DEFAULT_TIMEOUT_S = 60.0

# what a node of each role does when it runs (other roles run their FX target)
_SILENT = frozenset({Role.SCOPE_ENTER, Role.SCOPE_EXIT, Role.STREAM_TAG})  # nothing, and no event
_NOTHING = _SILENT | {Role.WAIT, Role.TAGGED_RECORD, Role.TAGGED_WAIT}  # nothing but their waiting


class StreamExecutor:
    """Executes one GraphModule under one mode's stream semantics; reusable across calls.

    ``recorder``: where runs report (None: races logged). ``pool``: the worker threads of the
    side streams; without one the executor makes its own on first use and :meth:`close` ends it.
    """

    def __init__(self, gm: Any, mode: Mode = Mode.MAX_AUTOTUNE, name: str = "graph", *,
                 threads_per_stream: int | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 check_deadlock: bool = True, serial: bool = False, recorder: Sink | None = None,
                 pool: WorkerPool | None = None, collectives: CollectiveLog | None = None) -> None:
        self.gm = gm
        self.name = name
        self.sched = build_schedule(gm, mode, name)
        self.mode = self.sched.mode
        self.threads_per_stream = threads_per_stream
        self.timeout_s = timeout_s
        self.serial = serial
        self.recorder = recorder
        self.pool = pool
        self.collectives = collectives
        self._own_pool = False
        self._fx_nodes = list(gm.graph.nodes)
        self._pos = {n: i for i, n in enumerate(self._fx_nodes)}
        self._warned: set[tuple[str, str]] = set()
        if check_deadlock:
            deadlock.check_plan(gm, self.sched, name)

    def close(self) -> None:
        """End the worker threads of the pool this executor made itself (a given pool is its owner's)."""
        if self._own_pool and self.pool is not None:
            self.pool.close()
            self.pool, self._own_pool = None, False

    def _workers(self) -> WorkerPool:
        if self.pool is None or self.pool.closed:
            self.pool, self._own_pool = WorkerPool(), True
        return self.pool

    # -- run -------------------------------------------------------------------------------------
    def __call__(self, *args: Any) -> Any:
        return self.run(args)

    def run(self, args: Sequence[Any]) -> Any:
        import torch

        sched = self.sched
        wall0 = time.perf_counter()
        recorder = self.recorder
        st = RunState(sched, self.name, self.timeout_s, recorder.origin() if recorder is not None else None)
        self._load_inputs(st, args)
        prev_threads = torch.get_num_threads()
        if self.threads_per_stream and prev_threads != self.threads_per_stream:
            torch.set_num_threads(self.threads_per_stream)
        grad = (torch.is_grad_enabled(), torch.is_inference_mode_enabled())
        serial = self.serial or torch._C._autograd._profiler_enabled()
        workers: list[Job] = []
        log = st.collectives = self.collectives
        if log is not None:
            log.graph(self.name, "start")
        try:
            if not serial:
                for s in range(1, len(sched.streams)):
                    if sched.per_stream[s]:
                        job = self._workers().submit(self._worker, st, s, grad)
                        job.stream = sched.streams[s]
                        workers.append(job)
            if serial:
                self._serial_loop(st)
            else:
                self._stream_loop(st, 0)
        except Abort:
            pass
        except BaseException as e:  # noqa: BLE001 - every stream's failure ends the run
            st.fail(e)
        finally:
            for w in workers:
                w.done.wait(self.timeout_s if not st.aborted else 1.0)
            if self.threads_per_stream and prev_threads != self.threads_per_stream:
                torch.set_num_threads(prev_threads)
        if log is not None:
            log.graph(self.name, "end")
        if st.error is not None:
            raise st.error
        alive = [w.stream for w in workers if not w.done.is_set()]
        if alive:
            raise StreamDeadlock(f"{self.name}: stream(s) {', '.join(alive)} still running after {self.timeout_s:g} s",
                                 hint="raise the executor timeout if the graph is that slow")
        self._report(recorder, st, time.perf_counter() - wall0)
        return st.values[sched.output] if sched.output is not None else None

    def _load_inputs(self, st: RunState, args: Sequence[Any]) -> None:
        k = 0
        for i, it in enumerate(self.sched.items):
            if it.role is not Role.INPUT:
                continue
            node = self._fx_nodes[i]
            if node.op == "placeholder":
                st.values[i] = args[k] if k < len(args) else (node.args[0] if node.args else None)
                k += 1
            else:
                st.values[i] = _fetch_attr(self.gm, str(node.target))
            st.done[i] = True

    def _worker(self, st: RunState, s: int, grad: tuple[bool, bool]) -> None:
        import torch

        threading.current_thread().name = f"airctl-stream:{self.sched.streams[s]}"
        _name_os_thread(f"air:{self.sched.streams[s]}")
        if self.threads_per_stream:
            torch.set_num_threads(self.threads_per_stream)
        try:
            with torch.set_grad_enabled(grad[0]), torch.inference_mode(grad[1]):
                self._stream_loop(st, s)
        except Abort:
            pass
        except BaseException as e:  # noqa: BLE001
            st.fail(e)

    def _stream_loop(self, st: RunState, s: int) -> None:
        items = self.sched.items
        for i in self.sched.per_stream[s]:
            it = items[i]
            if it.role is Role.INPUT:
                continue
            if it.deps:
                deadlock.await_deps(st, s, i, it.deps)
            elif st.aborted:
                raise Abort()
            self._run_node(st, s, i)
        with st.cond:
            st.running.pop(s, None)
            st.finished.add(s)
            deadlock.check_stuck(st)

    def _serial_loop(self, st: RunState) -> None:
        """All streams on the calling thread, interleaved: always the runnable node earliest in graph
        order (the profiler sees one thread only; the orderings and race checks are the same)."""
        import torch
        from torch.profiler import record_function

        sched = self.sched
        items = sched.items
        # under the profiler, each op is marked with its stream (the sim profiler's lanes); else nothing
        if torch._C._autograd._profiler_enabled():
            marks = [functools.partial(record_function, f"{STREAM_MARK}{name}") for name in sched.streams]
        else:
            marks = [contextlib.nullcontext] * len(sched.streams)
        heads = [0] * len(sched.streams)
        lists = [[i for i in lst if items[i].role is not Role.INPUT] for lst in sched.per_stream]
        while True:
            best = None
            for s, lst in enumerate(lists):
                if heads[s] < len(lst):
                    i = lst[heads[s]]
                    if (best is None or i < best[1]) and all(st.done[j] for j in items[i].deps):
                        best = (s, i)
            if best is None:
                break
            s, i = best
            with marks[s]():
                self._run_node(st, s, i)
            st.done[i] = True
            heads[s] += 1
        stuck = [s for s, lst in enumerate(lists) if heads[s] < len(lst)]
        if stuck:
            with st.cond:
                for s in stuck:
                    i = lists[s][heads[s]]
                    st.blocked[s] = (i, items[i].deps)
                deadlock.stop(st, "deadlock", stuck[0])

    def _run_node(self, st: RunState, s: int, i: int) -> None:
        sched = self.sched
        items = sched.items
        it = items[i]
        clock = st.clock[s]
        for j, kind in it.syncs:
            src = st.stamps[j]
            if src is None or src.sid == s:
                continue
            covered = clock[src.sid] >= src.pos
            hazards.merge(clock, src)
            if st.keep and not (covered and kind == "data"):  # a data edge already ordered: no sync shown
                st.syncs.append(SyncEdge(kind, items[j].name, it.name, sched.streams[src.sid], sched.streams[s],
                                         st.elapsed(), st.step))
        hazards.check_reads(st, s, it)
        st.running[s] = i
        start = time.perf_counter()
        st.values[i] = self._execute(st, i)
        end = time.perf_counter()
        st.pos[s] += 1
        stamp = Stamp(s, st.pos[s], tuple(clock))
        st.stamps[i] = stamp
        if it.inplace_target is not None or it.mutated_reads:
            hazards.track_inplace(st, s, it, stamp)
        if st.keep and it.role not in _SILENT and it.role is not Role.OUTPUT:
            st.events.append(OpEvent(it.name, it.op, sched.streams[s], start - st.t0, end - st.t0, it.source,
                                     it.module, st.step))
        if i in sched.signal:
            with st.cond:
                st.done[i] = True
                st.cond.notify_all()

    def _report(self, recorder: Sink | None, st: RunState, seconds: float) -> None:
        sched = self.sched
        if recorder is None:
            for r in st.races:
                key = (r.reader, r.producer)
                if key not in self._warned:
                    self._warned.add(key)
                    log.warning("airctl: stream race in %s: %s", self.name, r.message)
            return
        recorder.add_run(self.name, self.mode, st.events, st.syncs, st.races, sched.streams, sched.notes, seconds)

    # -- node execution ---------------------------------------------------------------------------
    def _execute(self, st: RunState, i: int) -> Any:
        import torch

        it = self.sched.items[i]
        node = self._fx_nodes[i]
        role = it.role
        if role in _NOTHING:
            return None
        if role is Role.RECORD:
            return torch.empty(0)
        values, pos = st.values, self._pos

        def load(n: Any) -> Any:
            return values[pos[n]]

        args = torch.fx.node.map_arg(node.args, load)
        if role is Role.WAIT_TENSOR:
            return args[0]
        if role is Role.OUTPUT:
            return args[0] if args else None
        kwargs = torch.fx.node.map_arg(node.kwargs, load)
        if st.collectives is not None and (it.collective is not None or it.waits_for is not None):
            return self._logged_call(st, i, node, args, kwargs)
        if node.op == "call_function":
            return node.target(*args, **kwargs)
        if node.op == "call_method":
            self_obj, *rest = args
            return getattr(self_obj, node.target)(*rest, **kwargs)
        if node.op == "call_module":
            return self.gm.get_submodule(node.target)(*args, **kwargs)
        raise AirctlError(f"{self.name}: cannot execute FX node {node.name} (op {node.op})", node=node.name)

    def _logged_call(self, st: RunState, i: int, node: Any, args: Any, kwargs: Any) -> Any:
        """A collective, or a wait for one, written to the collective log around the call."""
        it = self.sched.items[i]
        log = st.collectives
        stream = self.sched.streams[it.stream]
        if it.waits_for is not None:
            seq = st.collective_seq.get(it.waits_for)
            log.wait(seq, it.name, stream, "start")
            out = node.target(*args, **kwargs)
            log.wait(seq, it.name, stream, "end")
            return out
        seq = log.issue(graph=self.name, node=it.name, op=it.op, kind=it.collective, stream=stream,
                        **call_details(args, kwargs))
        st.collective_seq[i] = seq
        out = node.target(*args, **kwargs)
        log.done(seq)
        return out


def _fetch_attr(gm: Any, target: str) -> Any:
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _name_os_thread(name: str) -> None:
    """Name the OS thread (profiler lanes take it from there); Linux only, best effort."""
    try:
        libc = ctypes.CDLL(None)
        libc.prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    except Exception:  # noqa: BLE001 - cosmetic
        pass

"""Run an FX graph on several streams at once and check its synchronisation while it runs.

On the CPU every stream is a thread (the default stream is the calling thread) that runs its
nodes in graph order; torch ops release the GIL, so two streams' matmuls really overlap.
``threads_per_stream`` sets each thread's intra-op thread count for the run.

Two kinds of waiting happen, and only one of them is an ordering the device would give:

- **emulation waits** (``Item.deps``): a node never starts before the cross-stream inputs it
  reads exist, so the outputs always equal eager PyTorch, racy plan or not;
- **syncs** (``Item.syncs``): record/wait, TorchAir's fork/join closure events, and in
  max-autotune GE's synchronised data edges. Only these merge vector clocks.

Each stream keeps a vector clock; a node's stamp is (stream, position, clock). A read of a
value produced on another stream whose stamp is not covered by the reader's clock is a race
(:class:`~airctl.execute.timeline.Race`, both nodes named with their source lines). In-place
writes are checked the same way against earlier readers and writers of their tensor.

A plan that can never finish is stopped: before running, a wait that refers to a later node is
handed to the verifier's cycle check (``deadlock_cycle``); while running, the moment every
unfinished stream is blocked the run stops, and any single wait longer than ``timeout_s`` stops
it too. Either way an :class:`~airctl.errors.AirctlError` names each blocked node and what it
waits for — never a hang.
"""

from __future__ import annotations

import ctypes
import functools
import queue
import threading
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

from airctl.errors import AirctlError
from airctl.execute import recorder
from airctl.execute.schedule import MAX_AUTOTUNE, REDUCE_OVERHEAD, Schedule, build_schedule, stream_word
from airctl.execute.timeline import OpEvent, Race, SyncEdge

STREAM_MARK = "airctl.stream::"  # record_function name prefix around each op run serially (profiler on)

DEFAULT_TIMEOUT_S = 60.0


class StreamDeadlock(AirctlError):
    """The streams of a graph wait on each other (or one waits too long)."""


class Stamp(NamedTuple):
    sid: int
    pos: int
    clock: tuple[int, ...]


class _Abort(Exception):
    """Another stream failed: this one stops quietly."""


class _Run:
    """The shared state of one call: values, stamps, who is blocked on what."""

    def __init__(self, sched: Schedule) -> None:
        n = len(sched.items)
        k = len(sched.streams)
        self.values: list[Any] = [None] * n
        self.stamps: list[Stamp | None] = [None] * n
        self.done = [False] * n
        self.cond = threading.Condition()
        self.blocked: dict[int, tuple[int, list[int]]] = {}
        self.running: dict[int, int] = {}
        self.finished = {s for s in range(k) if not sched.per_stream[s]}
        self.error: BaseException | None = None
        self.aborted = False
        self.clock = [[0] * k for _ in range(k)]
        self.pos = [0] * k
        self.events: list[OpEvent] = []
        self.syncs: list[SyncEdge] = []
        self.races: list[Race] = []
        self.hb_lock = threading.Lock()
        self.last_writer: dict[int, tuple[int, Stamp]] = {}
        self.readers: dict[int, dict[int, tuple[int, Stamp]]] = {}


class StreamExecutor:
    """Executes one GraphModule under one mode's stream semantics; reusable across calls."""

    def __init__(self, gm: Any, mode: str = MAX_AUTOTUNE, name: str = "graph", *,
                 threads_per_stream: int | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 check_deadlock: bool = True, serial: bool = False) -> None:
        self.gm = gm
        self.name = name
        self.sched = build_schedule(gm, mode, name)
        self.mode = self.sched.mode
        self.threads_per_stream = threads_per_stream
        self.timeout_s = timeout_s
        self.serial = serial
        self._fx_nodes = list(gm.graph.nodes)
        self._pos = {n: i for i, n in enumerate(self._fx_nodes)}
        self._warned: set[tuple[str, str]] = set()
        if check_deadlock:
            self._static_deadlock_check()

    # -- static check ----------------------------------------------------------------------------
    def _static_deadlock_check(self) -> None:
        forward = [(it, j) for it in self.sched.items for j in it.deps if j > it.index]
        if not forward:
            return
        from airctl.io.fx_reader import read_fx
        from airctl.verify.cycles import deadlock_findings, fx_dependencies
        from airctl.verify.plan import build_plan

        graph = read_fx(self.gm, self.name)
        plan = build_plan(graph, self.mode)
        findings = deadlock_findings(graph, fx_dependencies(graph, plan.stream), self.mode)
        if not findings:
            return
        f = findings[0]
        it, j = forward[0]
        raise StreamDeadlock(
            f"{self.name}: the stream plan deadlocks (verifier rule deadlock_cycle): {f.message}; "
            f"{self.sched.describe(it.index)} waits for {self.sched.describe(j)}, which comes after it",
            node=it.name, file=_file_of(it.source), line=_line_of(it.source),
            hint="a pass put a wait before the record it waits for; move the wait after the record "
                 "(run `airctl check` on the ledger's fx stages to see where it appeared)")

    # -- run -------------------------------------------------------------------------------------
    def __call__(self, *args: Any) -> Any:
        return self.run(args)

    def run(self, args: Sequence[Any]) -> Any:
        import torch

        sched = self.sched
        wall0 = time.perf_counter()
        st = _Run(sched)
        origin = recorder.step_origin()
        step, t0 = origin if origin is not None else (0, time.perf_counter())
        keep = origin is not None
        self._load_inputs(st, args)
        prev_threads = torch.get_num_threads()
        if self.threads_per_stream and prev_threads != self.threads_per_stream:
            torch.set_num_threads(self.threads_per_stream)
        grad = (torch.is_grad_enabled(), torch.is_inference_mode_enabled())
        serial = self.serial or torch._C._autograd._profiler_enabled()
        workers: list[_Job] = []
        try:
            if not serial:
                for s in range(1, len(sched.streams)):
                    if sched.per_stream[s]:
                        job = _POOL.submit(self._worker, st, s, t0, step, keep, grad)
                        job.stream = sched.streams[s]
                        workers.append(job)
            if serial:
                self._serial_loop(st, t0, step, keep)
            else:
                self._stream_loop(st, 0, t0, step, keep)
        except _Abort:
            pass
        except BaseException as e:  # noqa: BLE001 - every stream's failure ends the run
            self._fail(st, e)
        finally:
            for w in workers:
                w.done.wait(self.timeout_s if not st.aborted else 1.0)
            if self.threads_per_stream and prev_threads != self.threads_per_stream:
                torch.set_num_threads(prev_threads)
        if st.error is not None:
            raise st.error
        alive = [w.stream for w in workers if not w.done.is_set()]
        if alive:
            raise StreamDeadlock(f"{self.name}: stream(s) {', '.join(alive)} still running after {self.timeout_s:g} s",
                                 hint="raise the executor timeout if the graph is that slow")
        self._report(st, time.perf_counter() - wall0)
        return st.values[sched.output] if sched.output is not None else None

    def _load_inputs(self, st: _Run, args: Sequence[Any]) -> None:
        k = 0
        for i, it in enumerate(self.sched.items):
            if it.role != "input":
                continue
            node = self._fx_nodes[i]
            if node.op == "placeholder":
                st.values[i] = args[k] if k < len(args) else (node.args[0] if node.args else None)
                k += 1
            else:
                st.values[i] = _fetch_attr(self.gm, str(node.target))
            st.done[i] = True

    def _worker(self, st: _Run, s: int, t0: float, step: int, keep: bool, grad: tuple[bool, bool]) -> None:
        import torch

        threading.current_thread().name = f"airctl-stream:{self.sched.streams[s]}"
        _name_os_thread(f"air:{self.sched.streams[s]}")
        if self.threads_per_stream:
            torch.set_num_threads(self.threads_per_stream)
        try:
            with torch.set_grad_enabled(grad[0]), torch.inference_mode(grad[1]):
                self._stream_loop(st, s, t0, step, keep)
        except _Abort:
            pass
        except BaseException as e:  # noqa: BLE001
            self._fail(st, e)

    def _fail(self, st: _Run, e: BaseException) -> None:
        with st.cond:
            if st.error is None:
                st.error = e
            st.aborted = True
            st.cond.notify_all()

    def _stream_loop(self, st: _Run, s: int, t0: float, step: int, keep: bool) -> None:
        sched = self.sched
        items = sched.items
        for i in sched.per_stream[s]:
            it = items[i]
            if it.role == "input":
                continue
            if it.deps:
                self._await(st, s, i, it.deps)
            elif st.aborted:
                raise _Abort()
            self._run_node(st, s, i, t0, step, keep)
        with st.cond:
            st.running.pop(s, None)
            st.finished.add(s)
            self._check_stuck(st)

    def _serial_loop(self, st: _Run, t0: float, step: int, keep: bool) -> None:
        """All streams on the calling thread, interleaved: always the runnable node earliest in graph
        order (the profiler sees one thread only; the orderings and race checks are the same)."""
        import contextlib

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
        lists = [[i for i in lst if items[i].role != "input"] for lst in sched.per_stream]
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
                self._run_node(st, s, i, t0, step, keep)
            st.done[i] = True
            heads[s] += 1
        stuck = [s for s, lst in enumerate(lists) if heads[s] < len(lst)]
        if stuck:
            with st.cond:
                for s in stuck:
                    i = lists[s][heads[s]]
                    st.blocked[s] = (i, items[i].deps)
                self._stop(st, "deadlock", stuck[0])

    def _run_node(self, st: _Run, s: int, i: int, t0: float, step: int, keep: bool) -> None:
        sched = self.sched
        items = sched.items
        it = items[i]
        clock = st.clock[s]
        for j, kind in it.syncs:
            src = st.stamps[j]
            if src is None or src.sid == s:
                continue
            covered = clock[src.sid] >= src.pos
            self._merge(clock, src)
            if keep and not (covered and kind == "data"):  # a data edge already ordered: no sync shown
                st.syncs.append(SyncEdge(kind, items[j].name, it.name, sched.streams[src.sid], sched.streams[s],
                                         time.perf_counter() - t0, step))
        self._check_reads(st, s, it)
        st.running[s] = i
        start = time.perf_counter()
        st.values[i] = self._execute(st, i)
        end = time.perf_counter()
        st.pos[s] += 1
        stamp = Stamp(s, st.pos[s], tuple(clock))
        st.stamps[i] = stamp
        if it.inplace_target is not None or it.mutated_reads:
            self._track_inplace(st, s, it, stamp)
        if keep and it.role not in ("noop", "output"):
            st.events.append(OpEvent(it.name, it.op, sched.streams[s], start - t0, end - t0, it.source,
                                     it.module, step))
        if i in sched.signal:
            with st.cond:
                st.done[i] = True
                st.cond.notify_all()

    @staticmethod
    def _merge(clock: list[int], src: Stamp) -> None:
        for k, v in enumerate(src.clock):
            if v > clock[k]:
                clock[k] = v
        if src.pos > clock[src.sid]:
            clock[src.sid] = src.pos

    # -- waiting, deadlock, timeout --------------------------------------------------------------
    def _await(self, st: _Run, s: int, i: int, deps: list[int]) -> None:
        done = st.done
        if all(done[j] for j in deps):
            if st.aborted:
                raise _Abort()
            return
        deadline = time.monotonic() + self.timeout_s
        with st.cond:
            st.blocked[s] = (i, deps)
            st.running.pop(s, None)
            try:
                self._check_stuck(st)
                while not st.aborted and not all(done[j] for j in deps):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._stop(st, "timeout", s)
                        break
                    st.cond.wait(left)
            finally:
                st.blocked.pop(s, None)
            if st.aborted:
                raise _Abort()

    def _check_stuck(self, st: _Run) -> None:
        """Called with ``st.cond`` held: stop the run when every unfinished stream is blocked."""
        if st.aborted:
            return
        live = [s for s in range(len(self.sched.streams)) if s not in st.finished]
        if not live:
            return
        for s in live:
            b = st.blocked.get(s)
            if b is None or all(st.done[j] for j in b[1]):
                return
        self._stop(st, "deadlock", live[0])

    def _stop(self, st: _Run, why: str, s: int) -> None:
        """Called with ``st.cond`` held: abort with a message naming every blocked node."""
        sched = self.sched
        lines = []
        first: int | None = None
        for sid in range(len(sched.streams)):
            b = st.blocked.get(sid)
            if b is not None:
                i, deps = b
                first = i if first is None or sid == s else first
                missing = [j for j in deps if not st.done[j]]
                what = "; ".join(self._waits_for(st, j) for j in missing)
                lines.append(f"{sched.describe(i)} waits for {what}")
            elif sid in st.running:
                lines.append(f"{stream_word(sched.streams[sid])} is running {sched.describe(st.running[sid])}")
        if why == "deadlock":
            head = f"{self.name}: deadlock: every unfinished stream is waiting, and none can go on"
            hint = ("a wait that waits for a record which only runs after it (on its own stream, or on a stream that "
                    "itself waits): move the wait after its record; `airctl check` names the cycle")
        else:
            head = f"{self.name}: a stream waited more than {self.timeout_s:g} s"
            hint = "raise the timeout if the graph is this slow; otherwise the waited-for node never finishes"
        it = sched.items[first] if first is not None else None
        err = StreamDeadlock(head + ":\n  " + "\n  ".join(lines), node=it.name if it else None,
                             file=_file_of(it.source) if it else None, line=_line_of(it.source) if it else None,
                             hint=hint)
        if st.error is None:
            st.error = err
        st.aborted = True
        st.cond.notify_all()

    def _waits_for(self, st: _Run, j: int) -> str:
        sched = self.sched
        it = sched.items[j]
        kind = "record" if it.role in ("record", "tagged_record") else "node"
        state = "running now" if st.running.get(it.stream) == j else "not run yet"
        return f"{kind} {sched.describe(j)} ({state})"

    # -- races ------------------------------------------------------------------------------------
    def _check_reads(self, st: _Run, s: int, it: Any) -> None:
        if not it.reads:
            return
        clock = st.clock[s]
        sched = self.sched
        for j in it.reads:
            src = st.stamps[j]
            if src is None or src.sid == s or clock[src.sid] >= src.pos:
                continue
            p = sched.items[j]
            why = ("reduce-overhead adds no synchronisation for cross-stream data edges"
                   if self.mode == REDUCE_OVERHEAD else "nothing orders them")
            st.races.append(Race(
                it.name, p.name, sched.streams[s], sched.streams[src.sid], it.source, p.source,
                f"{it.name}{_at(it.source)} on {stream_word(sched.streams[s])} reads {p.name}{_at(p.source)} "
                f"produced on {stream_word(sched.streams[src.sid])}, with no record/wait ordering them ({why})"))

    def _track_inplace(self, st: _Run, s: int, it: Any, stamp: Stamp) -> None:
        sched = self.sched
        clock = st.clock[s]

        def ordered(x: Stamp) -> bool:
            return x.sid == s or clock[x.sid] >= x.pos

        def race(reader: Any, producer: Any, rs: int, ps: int, text: str) -> None:
            st.races.append(Race(reader.name, producer.name, sched.streams[rs], sched.streams[ps], reader.source,
                                 producer.source, text + ", with no record/wait ordering them (an in-place hazard: "
                                 "no data edge connects them, so not even GE synchronises it)"))

        with st.hb_lock:
            for j in it.mutated_reads:
                w = st.last_writer.get(j)
                if w is not None and w[0] != it.index and not ordered(w[1]):
                    wi = sched.items[w[0]]
                    race(it, wi, s, w[1].sid, f"{wi.name}{_at(wi.source)} writes {sched.items[j].name} in place on "
                         f"{stream_word(sched.streams[w[1].sid])}; {it.name}{_at(it.source)} on "
                         f"{stream_word(sched.streams[s])} uses it")
            t = it.inplace_target
            if t is not None:
                for c, (ri, rst) in st.readers.get(t, {}).items():
                    if c != s and ri != it.index and not ordered(rst):
                        r = sched.items[ri]
                        race(r, it, c, s, f"{r.name}{_at(r.source)} on {stream_word(sched.streams[c])} reads "
                             f"{sched.items[t].name}; {it.name}{_at(it.source)} on {stream_word(sched.streams[s])} "
                             f"then writes it in place")
                st.last_writer[t] = (it.index, stamp)
            for j in it.mutated_reads:
                st.readers.setdefault(j, {})[s] = (it.index, stamp)

    def _report(self, st: _Run, seconds: float) -> None:
        sched = self.sched
        if not recorder.active():
            for r in st.races:
                key = (r.reader, r.producer)
                if key not in self._warned:
                    self._warned.add(key)
                    recorder.log.warning("airctl: stream race in %s: %s", self.name, r.message)
            return
        recorder.report(self.name, self.mode, st.events, st.syncs, st.races, sched.streams, sched.notes, seconds)

    # -- node execution ---------------------------------------------------------------------------
    def _execute(self, st: _Run, i: int) -> Any:
        import torch

        it = self.sched.items[i]
        node = self._fx_nodes[i]
        role = it.role
        if role in ("noop", "wait", "tagged_record", "tagged_wait"):
            return None
        if role == "record":
            return torch.empty(0)
        values, pos = st.values, self._pos

        def load(n: Any) -> Any:
            return values[pos[n]]

        args = torch.fx.node.map_arg(node.args, load)
        if role == "wait_tensor":
            return args[0]
        if role == "output":
            return args[0] if args else None
        kwargs = torch.fx.node.map_arg(node.kwargs, load)
        if node.op == "call_function":
            return node.target(*args, **kwargs)
        if node.op == "call_method":
            self_obj, *rest = args
            return getattr(self_obj, node.target)(*rest, **kwargs)
        if node.op == "call_module":
            return self.gm.get_submodule(node.target)(*args, **kwargs)
        raise AirctlError(f"{self.name}: cannot execute FX node {node.name} (op {node.op})", node=node.name)


class _Job:
    def __init__(self, fn: Any, args: tuple) -> None:
        self.fn, self.args = fn, args
        self.stream = ""
        self.done = threading.Event()


class _Pool:
    """Daemon threads kept between runs: a stream's thread is not created per call (a fresh
    thread costs its first ops some warm-up), and a stuck op never blocks interpreter exit."""

    def __init__(self) -> None:
        self._idle: list[queue.SimpleQueue] = []
        self._lock = threading.Lock()

    def submit(self, fn: Any, *args: Any) -> _Job:
        job = _Job(fn, args)
        with self._lock:
            q = self._idle.pop() if self._idle else None
        if q is None:
            q = queue.SimpleQueue()
            threading.Thread(target=self._loop, args=(q,), name="airctl-stream", daemon=True).start()
        q.put(job)
        return job

    def _loop(self, q: queue.SimpleQueue) -> None:
        while True:
            job = q.get()
            try:
                job.fn(*job.args)
            finally:
                job.done.set()
                with self._lock:
                    self._idle.append(q)


_POOL = _Pool()


def _fetch_attr(gm: Any, target: str) -> Any:
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _at(source: str | None) -> str:
    return f" ({source})" if source else ""


def _file_of(source: str | None) -> str | None:
    return source.rpartition(":")[0] if source and ":" in source else source


def _line_of(source: str | None) -> int | None:
    if not source or ":" not in source:
        return None
    tail = source.rpartition(":")[2]
    return int(tail) if tail.isdigit() else None


def _name_os_thread(name: str) -> None:
    """Name the OS thread (profiler lanes take it from there); Linux only, best effort."""
    try:
        libc = ctypes.CDLL(None)
        libc.prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    except Exception:  # noqa: BLE001 - cosmetic
        pass

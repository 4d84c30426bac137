"""``trace_view.json``: the lanes torch_npu's Chrome trace has, read with exact times.

What is used (docs/profile.md §trace_view.json): the ``Ascend Hardware`` process (a thread per
hardware stream, named ``Stream N``; every device task, compute and communication, as an ``X``
event), the ``Communication`` process (old name ``HCCL``: a ``Group … Communication`` thread per
communicator holding its HCCL ops, and ``Plane k`` threads holding the ops' tasks, whose args say
their ``stream id`` — Level1/2 only), host ``ProfilerStep#N`` ranges, and outermost ``aten::`` ops
per thread (CPU-only traces). ``ts`` is a string of epoch µs with three decimals (kept exact),
``dur`` a float of µs. The file is a bare JSON array (or ``{"traceEvents": [...]}``); a trailing
``,]`` (torch_npu leaves one when the device timeline is empty) is tolerated.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.profile.ascend.launches import HOST_PROCESS, LaunchCollector
from airctl.profile.ascend.model import COMPUTE_TYPE, EVENT_TASK, Issues
from airctl.profile.ascend.times import DAY_NS, TimeValueError, implausible_starts, us_to_ns
from airctl.profile.ascend.trace_stream import iter_events

FILE = "trace_view.json"
HARDWARE = "ascend hardware"
COMMUNICATION = ("communication", "hccl")
ARGS_KEPT = ("Task Type", "stream id", "Physic Stream Id", "Stream Id")  # what placement and tasks read
NO_ARGS: dict[str, Any] = {}  # shared, never written
BIG = 64 << 20  # bytes from which reading a trace shows progress
HW, COMM, HOST, OTHER = "hardware", "communication", "host", "other"  # what a process's lanes are to the analysis


@dataclass(slots=True)
class Span:
    """One complete event on a lane, times in integer ns."""

    name: str
    lane: str  # "2" for hardware stream 2; the thread's name otherwise
    start_ns: int
    dur_ns: int
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.dur_ns


@dataclass
class TraceView:
    path: Path
    hardware: list[Span] = field(default_factory=list)  # lane = hardware stream id
    comm_ops: list[Span] = field(default_factory=list)  # lane = the group thread's name
    plane_tasks: list[Span] = field(default_factory=list)  # lane = "Plane k"; args["stream id"] when written
    host_steps: dict[int, tuple[int, int]] = field(default_factory=dict)
    cpu_ops: list[Span] = field(default_factory=list)  # outermost aten:: ops, lane = thread name
    thread_names: dict[str, str] = field(default_factory=dict)  # tid -> name (for the sim's Thread Id)
    device: int | None = None
    launches: dict[tuple[str, int], int] = field(default_factory=dict)  # (lane, task start ns) -> host launch ns


def read_trace(path: Path, issues: Issues, progress: Callable[[str], None] | None = None) -> TraceView:
    """The lanes of ``path``, streamed (memory holds the kept spans, not the file). Process and thread names
    usually come first; an X event seen before its names is handled by a second pass over the file."""
    reader = _Reader(TraceView(path), issues)
    tick = _ticker(path, progress)
    for n, e in enumerate(iter_events(path, tick("reading"))):
        ph = e.get("ph")
        if ph == "M":
            reader.meta(e)
        elif ph == "X" and not reader.event(n, e, final=False):
            reader.deferred.append(n)
        elif ph == "s" or ph == "f":
            reader.launches.flow(e)
    if reader.deferred:
        todo = iter(reader.deferred)
        wanted = next(todo, -1)
        for n, e in enumerate(iter_events(path, tick("placing early events of"))):
            if n == wanted:
                reader.event(n, e, final=True)
                wanted = next(todo, -1)
                if wanted < 0:
                    break
    view = reader.view
    view.thread_names = {str(tid): name for (_pid, tid), name in reader.threads.items()}
    view.cpu_ops = _outermost(reader.aten)
    view.launches = reader.launches.resolve(reader.lane_of)
    _drop_implausible(view, issues)
    return view


class _Reader:
    """Classifies events into the view as they stream by; keeps only what the analysis uses."""

    def __init__(self, view: TraceView, issues: Issues) -> None:
        self.view, self.issues = view, issues
        self.procs: dict[str, str] = {}
        self.threads: dict[tuple[str, str], str] = {}
        self.aten: dict[tuple[str, str], list[Span]] = defaultdict(list)
        self.deferred = array("Q")  # indices of X events seen before their process or thread name
        self.strings: dict[Any, Any] = {}  # one copy of each repeated name and args dict
        self.kinds: dict[str, str] = {}  # pid -> HW, COMM or OTHER, once its process is named
        self.device_tasks = False  # a device task was seen: CPU ops are not kept
        self.launches = LaunchCollector()

    def meta(self, e: dict[str, Any]) -> None:
        args = e.get("args")
        if not isinstance(args, dict):
            return
        if e.get("name") == "process_name":
            self.procs[_key(e.get("pid"))] = str(args.get("name", ""))
            self.kinds.pop(_key(e.get("pid")), None)
        elif e.get("name") == "thread_name":
            self.threads[(_key(e.get("pid")), _key(e.get("tid")))] = str(args.get("name", ""))
        elif e.get("name") == "process_labels" and str(args.get("labels", "")).startswith("NPU "):
            label = str(args["labels"])[4:]
            self.view.device = int(label) if label.isdigit() else self.view.device

    def event(self, n: int, e: dict[str, Any], final: bool) -> bool:
        """Place X event ``e`` (the ``n``-th); False when its process or thread has no name yet (not final).
        Events of no lane the analysis reads (CANN launches, overlap spans, ...) cost a lookup, nothing more."""
        pid, tid = _key(e.get("pid")), _key(e.get("tid"))
        kind, lane = self._kind(pid), self.threads.get((pid, tid))
        if kind is None and not final:
            return False
        name = str(e.get("name", ""))
        if kind is HOST:
            self.launches.host_call(e)
            return True
        if kind is not HW and kind is not COMM and not name.startswith(("ProfilerStep#", "aten::")):
            return True
        if kind is not HW and kind is not COMM and name.startswith("aten::") and self.device_tasks:
            return True  # CPU ops are the tasks only of a trace without device tasks
        if lane is None and not final and not name.startswith("ProfilerStep#"):
            return False  # its lane is named by its thread's name, not seen yet
        name = self._one(name)
        span = _span(e, name, lane if lane is not None else str(tid), f"{self.view.path}: event {n}", self.issues)
        if span is None:
            return True
        if kind is HW:
            span.args = self._args(span.args)
            span.lane = self._one(_stream_of(span.lane, span.args))
            self.view.hardware.append(span)
            task_type = str(span.args.get("Task Type", ""))
            self._device_task(not task_type or bool(COMPUTE_TYPE.search(task_type)) or bool(EVENT_TASK.match(name))
                              or bool(EVENT_TASK.match(task_type)))
        elif kind is COMM:
            span.args = self._args(span.args)
            is_op = "communication" in span.lane.lower() or (not span.lane.lower().startswith("plane")
                                                              and name.startswith("hcom_"))
            (self.view.comm_ops if is_op else self.view.plane_tasks).append(span)
            self._device_task(is_op)
        elif name.startswith("ProfilerStep#"):
            number = name.partition("#")[2]
            if number.isdigit():
                self.view.host_steps[int(number)] = (span.start_ns, span.end_ns)
        else:
            span.args = NO_ARGS
            span.lane = lane if lane is not None else f"thread {tid}"
            self.aten[(pid, tid)].append(span)
        return True

    def _kind(self, pid: str) -> str | None:
        """HW, COMM or OTHER by the process's name; None while it has none."""
        kind = self.kinds.get(pid)
        if kind is None and pid in self.procs:
            lowered = self.procs[pid].lower()
            kind = self.kinds[pid] = HW if HARDWARE in lowered else COMM if lowered in COMMUNICATION else \
                HOST if lowered == HOST_PROCESS else OTHER
        return kind

    def lane_of(self, pid: str, tid: str) -> str:
        """A device thread's lane as its spans are placed (``"2"`` for ``Stream 2``)."""
        name = self.threads.get((pid, tid))
        return _stream_of(name, NO_ARGS) if name is not None else tid

    def _device_task(self, yes: bool) -> None:
        if yes and not self.device_tasks:
            self.device_tasks = True
            self.aten.clear()  # not needed: the device tasks are the tasks (read.tasks_from_trace)

    def _one(self, text: str) -> str:
        return self.strings.setdefault(text, text)

    def _args(self, args: dict[str, Any]) -> dict[str, Any]:
        """Only the keys the analysis reads, one shared dict per distinct content."""
        kept = tuple((k, args[k]) for k in ARGS_KEPT if k in args and isinstance(args[k], str | int | float))
        if not kept:
            return NO_ARGS
        return self.strings.setdefault(kept, dict(kept))


def _ticker(path: Path, progress: Callable[[str], None] | None) -> Callable[[str], Any]:
    """Progress callbacks for the passes over a big file (nothing for small ones)."""
    def make(what: str) -> Any:
        if progress is None:
            return None
        state = {"shown": -1}

        def tick(done: int, total: int) -> None:
            percent = done * 100 // total if total >= BIG else -1
            if percent != state["shown"] and percent >= 0:
                state["shown"] = percent
                progress(f"{what} {path.name}: {done >> 20} of {total >> 20} MB ({percent}%)")
        return tick
    return make


def _drop_implausible(view: TraceView, issues: Issues) -> None:
    """Device events whose start is nowhere near the others' (see times.implausible_starts) go, with a warning."""
    lanes = (view.hardware, view.comm_ops, view.plane_tasks)
    every = [s for lane in lanes for s in lane]
    odd = {id(every[i]) for i in implausible_starts([s.start_ns for s in every])}
    for lane in lanes:
        for s in lane:
            if id(s) in odd:
                issues.warn(str(view.path), f"event {s.name!r} left out: ts {s.start_ns / 1000} µs is not near the "
                            "other events'", kind="implausible trace start")
        lane[:] = [s for s in lane if id(s) not in odd]


def _key(value: Any) -> Any:
    """pids/tids as written (ints, sometimes beyond 2**31, or strings): compare as text."""
    return str(value)


def _span(e: dict[str, Any], name: str, lane: str, where: str, issues: Issues) -> Span | None:
    try:
        start, dur = us_to_ns(e.get("ts")), us_to_ns(e.get("dur", 0))
    except TimeValueError as err:
        issues.warn(where, f"event {name!r} left out: ts/dur is not a number ({err.value!r})", kind="bad trace time")
        return None
    if dur < 0 or dur > DAY_NS:
        issues.warn(where, f"event {name!r} left out: dur {dur / 1000} µs is {'negative' if dur < 0 else 'over a day'}",
                    kind="implausible trace duration")
        return None
    args = e.get("args")
    return Span(name, lane, start, dur, args if isinstance(args, dict) else {})


def _stream_of(lane: str, args: dict[str, Any]) -> str:
    if lane.startswith("Stream "):
        return lane[len("Stream "):].strip()
    for key in ("Physic Stream Id", "Stream Id"):
        if key in args:
            return str(args[key])
    return lane


def _outermost(per_thread: dict[tuple[Any, Any], list[Span]]) -> list[Span]:
    out: list[Span] = []
    for ops in per_thread.values():
        open_until = None
        for s in sorted(ops, key=lambda s: (s.start_ns, -s.dur_ns)):
            if open_until is None or s.start_ns >= open_until:
                out.append(s)
                open_until = s.end_ns
    return out

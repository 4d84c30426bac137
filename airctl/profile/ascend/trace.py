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

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.profile.ascend.model import Issues, ProfileReadError
from airctl.profile.ascend.times import DAY_NS, TimeValueError, implausible_starts, us_to_ns

FILE = "trace_view.json"
HARDWARE = "ascend hardware"
COMMUNICATION = ("communication", "hccl")


@dataclass
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


def load_events(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise ProfileReadError(f"cannot read {path.name}: {e.strerror or e}", file=str(path)) from e
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        stripped = text.rstrip()
        if stripped.endswith(",]"):  # torch_npu: host events, then an empty device timeline
            return load_events_text(stripped[:-2] + "]", path)
        raise ProfileReadError(f"{path.name} is not valid JSON: {e.msg}", file=str(path), line=e.lineno,
                               column=e.colno, hint="the profiler may have been stopped while writing; "
                                                    "profile again") from e
    except RecursionError:
        raise ProfileReadError(f"{path.name} is nested too deeply to be a Chrome trace", file=str(path),
                               hint="expected a flat list of trace events as torch_npu writes it") from None
    return _events(doc, path)


def load_events_text(text: str, path: Path) -> list[dict[str, Any]]:
    try:
        return _events(json.loads(text), path)
    except (json.JSONDecodeError, RecursionError) as e:
        raise ProfileReadError(f"{path.name} is not valid JSON", file=str(path),
                               line=getattr(e, "lineno", None)) from None


def _events(doc: Any, path: Path) -> list[dict[str, Any]]:
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise ProfileReadError(f"{path.name} is neither a list of trace events nor an object with 'traceEvents'",
                               file=str(path), hint="expected Chrome trace JSON as torch_npu writes it")
    return [e for e in events if isinstance(e, dict)]


def read_trace(path: Path, issues: Issues) -> TraceView:
    events = load_events(path)
    view = TraceView(path)
    procs: dict[Any, str] = {}
    threads: dict[tuple[Any, Any], str] = {}
    for e in events:
        if e.get("ph") != "M" or not isinstance(e.get("args"), dict):
            continue
        args = e["args"]
        if e.get("name") == "process_name":
            procs[_key(e.get("pid"))] = str(args.get("name", ""))
        elif e.get("name") == "thread_name":
            threads[(_key(e.get("pid")), _key(e.get("tid")))] = str(args.get("name", ""))
        elif e.get("name") == "process_labels" and str(args.get("labels", "")).startswith("NPU "):
            label = str(args["labels"])[4:]
            view.device = int(label) if label.isdigit() else view.device
    view.thread_names = {str(tid): name for (_pid, tid), name in threads.items()}
    hardware = {p for p, n in procs.items() if HARDWARE in n.lower()}
    comm = {p for p, n in procs.items() if n.lower() in COMMUNICATION}
    aten: dict[tuple[Any, Any], list[Span]] = defaultdict(list)
    for n, e in enumerate(events):
        if e.get("ph") != "X":
            continue
        pid, tid, name = _key(e.get("pid")), _key(e.get("tid")), str(e.get("name", ""))
        span = _span(e, name, threads.get((pid, tid), str(tid)), f"{path}: event {n}", issues)
        if span is None:
            continue
        if pid in hardware:
            span.lane = _stream_of(span.lane, span.args)
            view.hardware.append(span)
        elif pid in comm:
            is_op = "communication" in span.lane.lower() or (not span.lane.lower().startswith("plane")
                                                              and name.startswith("hcom_"))
            (view.comm_ops if is_op else view.plane_tasks).append(span)
        elif name.startswith("ProfilerStep#"):
            number = name.partition("#")[2]
            if number.isdigit():
                view.host_steps[int(number)] = (span.start_ns, span.end_ns)
        elif name.startswith("aten::"):
            span.lane = threads.get((pid, tid), f"thread {tid}")
            aten[(pid, tid)].append(span)
    view.cpu_ops = _outermost(aten)
    _drop_implausible(view, issues)
    return view


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

"""``airctl profile analyze DIR``: a torch_npu profiler folder read back as a :class:`Timeline`.

Input (reference/torchair.md §7; the sim stand-in writes the same layout)::

    DIR = <host>_<pid>_<stamp>_ascend_pt/      (or its parent, or its ASCEND_PROFILER_OUTPUT)
        ASCEND_PROFILER_OUTPUT/kernel_details.csv   one row per device task / kernel
        ASCEND_PROFILER_OUTPUT/trace_view.json      Chrome trace: lane names, and the tasks when
                                                    kernel_details.csv is missing
        ASCEND_PROFILER_OUTPUT/step_trace_time.csv  optional (not needed: steps come from Step Id)
        profiler_info.json                          optional; "simulated": true under airctl sim

Where the tasks come from, first match wins: ``kernel_details.csv`` (stream = its ``Stream ID``
column, else its ``Thread Id`` named after the trace's lane); the trace's ``Ascend Hardware``
process (a lane per ``Stream N``; the stream is named ``N`` either way); the trace's outermost
``aten::`` ops per thread (CPU traces).
Times restart at 0 in each step (``Step Id``). Sync edges are inferred from event tasks: each
``EVENT_WAIT``/``NOTIFY_WAIT`` is paired with the latest ``*_RECORD`` on another stream that ended
before the wait did. With a ledger, tasks are linked to graph nodes where the names allow (a node
of that name, or the n-th ``aten::mm`` of a step to the n-th ``aten.mm.*`` node when the counts agree).
"""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.execute.timeline import OpEvent, SyncEdge, Timeline

OUTPUT = "ASCEND_PROFILER_OUTPUT"
TRACE = "trace_view.json"
KERNELS = "kernel_details.csv"
_RECORD = re.compile(r"(EVENT|NOTIFY)_?RECORD|^air\.record", re.IGNORECASE)
_WAIT = re.compile(r"(EVENT|NOTIFY)_?WAIT|StreamWaitEvent|^air\.wait", re.IGNORECASE)


class ProfileReadError(AirctlError):
    """A profiler folder or one of its files cannot be read."""


@dataclass
class _Task:
    name: str
    type: str
    stream: str
    start_us: float
    dur_us: float
    step: int

    @property
    def end_us(self) -> float:
        return self.start_us + self.dur_us


@dataclass
class Lanes:
    """Names from the trace's metadata events."""

    processes: dict[Any, str] = field(default_factory=dict)
    threads: dict[tuple[Any, Any], str] = field(default_factory=dict)


def find_folder(path: Path) -> tuple[Path, list[str]]:
    """The ``*_ascend_pt`` folder PATH names, and notes (when several were found, the newest is used)."""
    path = Path(path)
    if not path.exists():
        raise ProfileReadError("no such folder", file=str(path),
                               hint="pass the *_ascend_pt folder the profiler wrote (tensorboard_trace_handler's dir)")
    if path.is_file():
        path = path.parent
    if path.name == OUTPUT:
        return path.parent, []
    if (path / OUTPUT).is_dir():
        return path, []
    found = sorted((p.parent for p in path.glob(f"**/{OUTPUT}") if p.is_dir()), key=lambda p: p.name)
    if not found:
        raise ProfileReadError(f"no {OUTPUT} folder in here", file=str(path),
                               hint="pass a torch_npu profiler output folder (<host>_<pid>_<stamp>_ascend_pt); "
                                    "on an NPU, profiles are parsed into it when the profiler stops")
    notes = [f"{len(found)} profiler folders found; analysing the newest: {found[-1].name}"] if len(found) > 1 else []
    return found[-1], notes


def read_trace(path: Path) -> list[dict[str, Any]]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ProfileReadError(f"{TRACE} is not valid JSON: {e.msg}", file=str(path), line=e.lineno, column=e.colno,
                               hint="the profiler may have been stopped while writing; profile again") from e
    except (OSError, UnicodeDecodeError) as e:
        raise ProfileReadError(f"cannot read {TRACE}: {e}", file=str(path)) from e
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise ProfileReadError(f"{TRACE} is neither a list of trace events nor an object with 'traceEvents'",
                               file=str(path), hint="expected Chrome trace JSON as torch_npu writes it")
    return [e for e in events if isinstance(e, dict)]


def _num(value: Any, what: str, file: Path, line: int | None = None) -> float:
    try:
        return float(str(value).strip())
    except (TypeError, ValueError):
        raise ProfileReadError(f"{what} is not a number: {value!r}", file=str(file), line=line,
                               hint="kernel_details.csv should be the profiler's own output, unedited") from None


def _column(header: list[str], *names: str) -> str | None:
    lowered = {h.strip().lower(): h for h in header}
    for n in names:
        if n.lower() in lowered:
            return lowered[n.lower()]
    return None


def read_kernels(path: Path, lanes: Lanes) -> list[_Task]:
    try:
        fh = open(path, newline="", encoding="utf-8-sig")  # noqa: SIM115 - closed below
    except OSError as e:
        raise ProfileReadError(f"cannot read {KERNELS}: {e}", file=str(path)) from e
    with fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        name_c, start_c, dur_c = (_column(header, "Name"), _column(header, "Start Time(us)"),
                                  _column(header, "Duration(us)"))
        missing = [c for c, got in (("Name", name_c), ("Start Time(us)", start_c), ("Duration(us)", dur_c)) if not got]
        if missing:
            raise ProfileReadError(f"{KERNELS} lacks the column(s) {', '.join(missing)}; it has: "
                                   f"{', '.join(header) or 'no header'}", file=str(path), line=1,
                                   hint="expected torch_npu's kernel_details.csv (Name, Type, Start Time(us), "
                                        "Duration(us), Step Id, ...)")
        type_c = _column(header, "Type")
        step_c = _column(header, "Step Id")
        stream_c = _column(header, "Stream ID", "Stream Id")
        thread_c = _column(header, "Thread Id", "Thread ID")
        thread_names = {str(tid): name for (_pid, tid), name in lanes.threads.items()}
        tasks = []
        for row in reader:
            line = reader.line_num
            if not any((v or "").strip() for v in row.values()):
                continue
            if stream_c and (row.get(stream_c) or "").strip():
                stream = row[stream_c].strip()
            elif thread_c and (row.get(thread_c) or "").strip():
                tid = row[thread_c].strip()
                stream = thread_names.get(tid, f"thread {tid}")
            else:
                stream = "default"
            step_text = (row.get(step_c) or "").strip() if step_c else ""
            step = int(_num(step_text, "Step Id", path, line)) if step_text else 0
            name = (row.get(name_c) or "").strip()  # type: ignore[arg-type]
            tasks.append(_Task(name, (row.get(type_c) or "").strip() if type_c else name, stream,
                               _num(row.get(start_c), "Start Time(us)", path, line),  # type: ignore[arg-type]
                               _num(row.get(dur_c), "Duration(us)", path, line), step))  # type: ignore[arg-type]
    return tasks


def _lanes(events: list[dict[str, Any]]) -> Lanes:
    lanes = Lanes()
    for e in events:
        if e.get("ph") != "M":
            continue
        name = (e.get("args") or {}).get("name")
        if name is None:
            continue
        if e.get("name") == "process_name":
            lanes.processes[e.get("pid")] = str(name)
        elif e.get("name") == "thread_name":
            lanes.threads[(e.get("pid"), e.get("tid"))] = str(name)
    return lanes


def _steps_from_trace(events: list[dict[str, Any]], file: Path) -> list[tuple[int, float, float]]:
    out = []
    for e in events:
        name = str(e.get("name", ""))
        if e.get("ph") == "X" and name.startswith("ProfilerStep#"):
            start = _num(e.get("ts"), "ts of " + name, file)
            number = name.partition("#")[2]
            end = start + _num(e.get("dur", 0), "dur", file)
            out.append((int(number) if number.isdigit() else len(out), start, end))
    return sorted(out, key=lambda s: s[1])


def tasks_from_trace(events: list[dict[str, Any]], lanes: Lanes, file: Path) -> list[_Task]:
    """Device tasks from the ``Ascend Hardware`` process; else outermost ``aten::`` ops per thread."""
    steps = _steps_from_trace(events, file)

    def step_of(ts: float) -> int:
        return next((s for s, a, b in steps if a <= ts <= b), steps[0][0] if steps else 0)

    hardware = {pid for pid, name in lanes.processes.items() if "ascend hardware" in name.lower()}
    spans = [e for e in events if e.get("ph") == "X"]
    tasks: list[_Task] = []
    if hardware:
        for e in spans:
            if e.get("pid") in hardware:
                lane = lanes.threads.get((e.get("pid"), e.get("tid")), str(e.get("tid")))
                lane = lane[len("Stream "):] if lane.startswith("Stream ") else lane  # "Stream 7" -> "7"
                ts = _num(e.get("ts"), "ts", file)
                name, task_type = str(e.get("name", "")), str((e.get("args") or {}).get("Task Type", ""))
                sync = _RECORD.search(task_type) or _WAIT.search(task_type)
                tasks.append(_Task(name, task_type if sync else name, lane, ts, _num(e.get("dur", 0), "dur", file),
                                   step_of(ts)))
        return tasks
    per_thread: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for e in spans:
        if str(e.get("name", "")).startswith("aten::"):
            per_thread[(e.get("pid"), e.get("tid"))].append(e)
    for key, ops in per_thread.items():
        lane = lanes.threads.get(key, f"thread {key[1]}")
        open_until = float("-inf")
        for e in sorted(ops, key=lambda e: (_num(e.get("ts"), "ts", file), -_num(e.get("dur", 0), "dur", file))):
            ts, dur = _num(e.get("ts"), "ts", file), _num(e.get("dur", 0), "dur", file)
            if ts >= open_until:
                name = str(e["name"])
                tasks.append(_Task(name, name.split("::")[-1], lane, ts, dur, step_of(ts)))
                open_until = ts + dur
    return tasks


def _infer_syncs(tasks: list[_Task]) -> list[tuple[int, int]]:
    """(record index, wait index) pairs: each wait with the latest record on another stream ended before it."""
    records = [i for i, t in enumerate(tasks) if _RECORD.search(t.name) or _RECORD.search(t.type)]
    pairs = []
    for i, t in enumerate(tasks):
        if not (_WAIT.search(t.name) or _WAIT.search(t.type)):
            continue
        cands = [j for j in records if tasks[j].stream != t.stream and tasks[j].step == t.step
                 and tasks[j].end_us <= t.end_us]
        if cands:
            pairs.append((max(cands, key=lambda j: tasks[j].end_us), i))
    return pairs


def _unique_names(tasks: list[_Task]) -> list[str]:
    """Task names made unique within a step (``MatMul``, ``MatMul#2``): events are keyed by name."""
    seen: dict[tuple[int, str], int] = defaultdict(int)
    out = []
    for t in tasks:
        seen[(t.step, t.name)] += 1
        n = seen[(t.step, t.name)]
        out.append(t.name if n == 1 else f"{t.name}#{n}")
    return out


def analyze_folder(path: Path, ledger: Path | None = None) -> Timeline:
    """Read a profiler folder (see the module docstring) into one Timeline (mode ``npu-profile``)."""
    folder, notes = find_folder(path)
    out_dir = folder / OUTPUT
    trace_path, kernels_path = out_dir / TRACE, out_dir / KERNELS
    if not trace_path.is_file() and not kernels_path.is_file():
        raise ProfileReadError(f"neither {TRACE} nor {KERNELS} in {OUTPUT}", file=str(out_dir),
                               hint="the profiler did not finish parsing; on an NPU, parse it offline with "
                                    "torch_npu.profiler.profiler.analyse(<folder>)")
    trace = read_trace(trace_path) if trace_path.is_file() else []
    lanes = _lanes(trace)
    tasks = read_kernels(kernels_path, lanes) if kernels_path.is_file() else []
    source = KERNELS
    if not tasks:
        tasks, source = tasks_from_trace(trace, lanes, trace_path), TRACE
    tasks.sort(key=lambda t: (t.step, t.start_us))
    step_start: dict[int, float] = {}
    step_end: dict[int, float] = {}
    for t in tasks:
        step_start[t.step] = min(step_start.get(t.step, t.start_us), t.start_us)
        step_end[t.step] = max(step_end.get(t.step, t.end_us), t.end_us)
    names = _unique_names(tasks)
    events = [OpEvent(node=names[i], op=t.type or t.name, stream=t.stream,
                      start_s=(t.start_us - step_start[t.step]) / 1e6, end_s=(t.end_us - step_start[t.step]) / 1e6,
                      step=t.step) for i, t in enumerate(tasks)]
    syncs = [SyncEdge("event", events[r].node, events[w].node, events[r].stream, events[w].stream,
                      events[r].end_s, events[w].step) for r, w in _infer_syncs(tasks)]
    info = _info(folder)
    meta: dict[str, Any] = {"folder": str(folder), "tasks_from": source, "tasks": len(tasks),
                            "simulated": bool(info.get("simulated")), "notes": notes,
                            "syncs": "inferred from event record/wait tasks"}
    timeline = Timeline(graph=folder.name, mode="npu-profile", events=events, syncs=syncs, steps=len(step_start),
                        step_seconds=[(step_end[s] - step_start[s]) / 1e6 for s in sorted(step_start)], meta=meta)
    if ledger is not None:
        meta["links"] = link_to_ledger(timeline, ledger)
    return timeline


def _info(folder: Path) -> dict[str, Any]:
    for name in ("profiler_info.json", "profiler_metadata.json"):
        p = folder / name
        if p.is_file():
            try:
                data = json.loads(p.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, OSError, UnicodeDecodeError):
                continue
            if isinstance(data, dict):
                return data
    infos = sorted(folder.glob("profiler_info_*.json"))
    if infos:
        try:
            data = json.loads(infos[0].read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (json.JSONDecodeError, OSError, UnicodeDecodeError):
            return {}
    return {}


def link_to_ledger(timeline: Timeline, ledger: Path) -> dict[str, Any]:
    """Rename events after graph nodes where the names allow (see the module docstring); in place.

    Returns ``{"linked": n, "unlinked": m, "graphs": [...]}``."""
    from airctl.ledger.defaults import Request
    from airctl.ledger.reader import Ledger

    led = Ledger.open(ledger)
    nodes: list[Any] = []  # FX nodes of each graph's final FX stage
    by_name: dict[str, Any] = {}
    for gid in led.graph_ids():
        fx = {n.name: n for n in led.load(led.find_stage(None, gid, Request.PROFILE)).nodes
              if n.kind not in ("placeholder", "output", "get_attr")}
        nodes += fx.values()
        by_name.update(fx)
        ge_stages = [s for s in led.stages(gid) if s.dialect == "ge"]
        if ge_stages:  # an NPU task is named after its GE op (MatMul_1); the op knows its FX node
            for op in led.load(ge_stages[-1]).nodes:
                fx_names = op.meta.get("fx_tensor_names") or []
                origin = fx.get(str(fx_names[0]).partition("-")[0]) if fx_names else None
                by_name.setdefault(op.name, origin or op)
    by_base: dict[str, list[Any]] = defaultdict(list)
    for n in nodes:
        parts = n.op.split(".")
        if len(parts) >= 2 and parts[0] == "aten":
            by_base[parts[1]].append(n)
    per_step: dict[tuple[int, str], list[OpEvent]] = defaultdict(list)
    for e in timeline.events:
        if e.node.startswith("aten::"):
            per_step[(e.step, e.node.split("#")[0][len("aten::"):])].append(e)
    before = [(e.step, e.node) for e in timeline.events]
    linked = 0
    for e in timeline.events:
        node = by_name.get(e.node)
        if node is not None:
            _apply(e, node)
            linked += 1
    for (_step, base), evs in per_step.items():
        cands = by_base.get(base, [])
        if cands and len(cands) == len(evs):
            for e, node in zip(evs, cands, strict=True):
                _apply(e, node)
                linked += 1
    names: dict[tuple[int, str], int] = defaultdict(int)
    for e in timeline.events:  # keep names unique per step after renaming
        names[(e.step, e.node)] += 1
        if names[(e.step, e.node)] > 1:
            e.node = f"{e.node}#{names[(e.step, e.node)]}"
    renamed = {old: e.node for old, e in zip(before, timeline.events, strict=True)}
    for s in timeline.syncs:
        s.src = renamed.get((s.step, s.src), s.src)
        s.dst = renamed.get((s.step, s.dst), s.dst)
    return {"linked": linked, "unlinked": len(timeline.events) - linked, "ledger": str(ledger),
            "graphs": led.graph_ids()}


def _apply(e: OpEvent, node: Any) -> None:
    e.node, e.op, e.source, e.module = node.name, node.op, node.source, node.module

"""Timelines as a Chrome trace (Trace Event Format JSON): opens in https://ui.perfetto.dev and chrome://tracing.

Layout (docs/profile.md §Trace format):

- one process per graph (``pid`` 1, 2, … named ``graph_1 (max-autotune)``), one thread lane per
  stream (``tid`` 1, 2, … named ``stream <name>``, the main stream first);
- each op is a complete event ``"ph": "X"`` (``ts``/``dur`` in µs) with ``args`` node, op, source,
  module, step (and kind ``communication`` for an NPU's HCCL op); steps follow each other on the time axis;
- each sync edge is a flow: ``"ph": "s"`` inside the source op and ``"ph": "f"`` (``"bp": "e"``)
  inside the destination op, with the same ``id``; ``name`` is the sync kind (``record_wait``, …);
- each race is an instant event ``"ph": "i"`` on the reader's lane, named ``race: …``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from airctl.execute.timeline import OpEvent, Timeline
from airctl.profile import events as ev

US = 1e6
MIN_DUR_US = 0.001  # zero-length slices cannot hold a flow end in every viewer


def _lanes(timeline: Timeline) -> dict[str, int]:
    return {s: i + 1 for i, s in enumerate(timeline.streams())}


def write_chrome_trace(path: Path, timelines: list[Timeline], meta: dict[str, Any] | None = None) -> None:
    """The trace document written to ``path`` one event at a time (a profile of a million tasks is
    never a list of a million dicts, nor one string)."""
    with path.open("w", encoding="utf-8") as f:
        f.write('{"traceEvents": [\n')
        for n, event in enumerate(trace_events(timelines)):
            f.write((",\n" if n else "") + json.dumps(event, default=str))
        other = json.dumps({"generator": "airctl profile", **(meta or {})}, default=str)
        f.write(f'\n], "displayTimeUnit": "ms", "otherData": {other}}}\n')


def trace_events(timelines: list[Timeline]) -> Iterator[dict[str, Any]]:
    """The trace's events, in order: per timeline its names, then per step its ops, flows and races."""
    flow_id = 0
    for pid, t in enumerate(timelines, start=1):
        lanes = _lanes(t)
        yield ({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                    "args": {"name": f"{t.graph} ({t.mode})"}})
        yield ({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        for stream, tid in lanes.items():
            yield ({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"stream {stream}"}})
            yield ({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}})
        offset = 0.0
        for n, step in enumerate(ev.step_ids(t)):
            events = ev.step_events(t, step)
            spans: list[tuple[float, float]] = []
            for e in events:
                ts, dur = (offset + e.start_s) * US, max((e.end_s - e.start_s) * US, MIN_DUR_US)
                spans.append((ts, dur))
                args = {"node": e.node, "op": e.op, "source": e.source, "module": e.module, "step": e.step,
                        "kind": e.kind}
                yield ({"ph": "X", "name": e.node, "cat": "op", "pid": pid, "tid": lanes[e.stream],
                            "ts": ts, "dur": dur, "args": {k: v for k, v in args.items() if v is not None}})
            for sync, i, j in ev.resolved_syncs(t, step, events):
                flow_id += 1
                (s_ts, s_dur), (d_ts, d_dur) = spans[i], spans[j]
                src, dst = events[i], events[j]
                common = {"name": sync.kind, "cat": "sync", "id": flow_id, "pid": pid}
                yield ({**common, "ph": "s", "tid": lanes[src.stream], "ts": s_ts + s_dur / 2})
                yield ({**common, "ph": "f", "bp": "e", "tid": lanes[dst.stream], "ts": d_ts + d_dur / 2})
            if n == 0:
                yield from _races(t, events, spans, lanes, pid)
            a, b = ev.span(events)
            measured = t.step_seconds[n] if n < len(t.step_seconds) else 0.0
            offset += max(b, measured) + 0.05 * max(b - a, 1e-6)


def _races(t: Timeline, events: list[OpEvent], spans: list[tuple[float, float]], lanes: dict[str, int],
           pid: int) -> list[dict[str, Any]]:
    index = {e.node: i for i, e in enumerate(events)}
    out = []
    for r in t.races:
        i = index.get(r.reader)
        ts = spans[i][0] if i is not None else 0.0
        tid = lanes.get(r.reader_stream, lanes.get(events[i].stream, 1) if i is not None else 1)
        out.append({"ph": "i", "s": "t", "name": f"race: {r.reader} reads {r.producer} unordered", "cat": "race",
                    "pid": pid, "tid": tid, "ts": ts, "cname": "terrible",
                    "args": {"reader": r.reader, "producer": r.producer, "reader_stream": r.reader_stream,
                             "producer_stream": r.producer_stream, "reader_source": r.reader_source,
                             "producer_source": r.producer_source, "message": r.message}})
    return out

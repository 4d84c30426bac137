"""One ``<worker>_<pid>_<stamp>_ascend_pt`` folder per saved trace: what torch_npu's
``tensorboard_trace_handler`` leaves, from a CPU trace.

The writer exports torch's Chrome trace, adds the device view (one lane per stream holding the
kernels, as the NPU's task lanes do), writes the tables (:mod:`.tables`) and the two JSON files
that say what produced the folder (marked simulated).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
from pathlib import Path
from typing import Any

from airctl.sim.torch_npu.profiler import tables
from airctl.sim.torch_npu.profiler.kernels import Span, kernels_of, spans_of, step_ranges, streams_of


def folder_name(prof: Any, worker_name: str | None) -> str:
    """``<worker or host>_<pid>_<YYYYmmddHHMMSSmmm>_ascend_pt``, stamped when the trace started."""
    started = getattr(prof, "trace_started_at", None) or _dt.datetime.now().astimezone()
    stamp = started.strftime("%Y%m%d%H%M%S%f")[:-3]
    return f"{worker_name or socket.gethostname()}_{os.getpid()}_{stamp}_ascend_pt"


def write_ascend_layout(prof: Any, root: Path, worker_name: str | None = None) -> Path:
    """Write one saved trace of ``prof`` (sim's :class:`~.profiler.profile`, which calls this) as
    ``<root>/<...>_ascend_pt``; returns the folder."""
    out = Path(root) / folder_name(prof, worker_name)
    result = out / "ASCEND_PROFILER_OUTPUT"
    result.mkdir(parents=True, exist_ok=True)
    trace_file = result / "trace_view.json"
    prof.export_chrome_trace(str(trace_file))
    doc = json.loads(trace_file.read_text(encoding="utf-8"))
    spans = spans_of(doc)
    steps = step_ranges(spans, list(getattr(prof, "trace_steps", [])))
    default_step = steps[0][0] if steps else getattr(prof, "step_num", 0)

    def step_of(e: Span) -> int:
        for step, start, end in steps:
            if start <= e.start <= end:
                return step
        return default_step

    kernels = kernels_of(spans)
    streams = streams_of(spans, kernels)
    add_stream_lanes(doc, kernels, streams)
    trace_file.write_text(json.dumps(doc), encoding="utf-8")
    tables.write_kernel_details(result / "kernel_details.csv", kernels, streams, step_of)
    tables.write_op_statistic(result / "op_statistic.csv", kernels)
    tables.write_step_trace_time(result / "step_trace_time.csv", kernels, step_of, default_step)
    _write_info(out, prof)
    return out


def add_stream_lanes(doc: Any, kernels: list[Span], streams: list[str]) -> None:
    """Add the device view to the trace document: one lane per stream (``Stream <name>``) holding the
    kernels, as the NPU's task lanes do, next to torch's host-side lanes."""
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        return
    pid = "NPU (airctl sim)"
    lanes = {name: i for i, name in enumerate(dict.fromkeys(streams))}
    events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": pid}})
    for name, tid in lanes.items():
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"Stream {name}"}})
    for k, name in zip(kernels, streams, strict=True):
        events.append({"ph": "X", "cat": "kernel", "name": k.name.split("::")[-1], "pid": pid, "tid": lanes[name],
                       "ts": k.start, "dur": k.dur, "args": {"Stream Id": name}})


def _write_info(out: Path, prof: Any) -> None:
    import torch

    config = getattr(prof, "experimental_config", None)
    info = {
        "backend": "airctl sim (CPU)",
        "simulated": True,
        "torch": torch.__version__,
        "activities": sorted(a.name for a in getattr(prof, "activities", set())),
        "experimental_config": config.to_json() if hasattr(config, "to_json") else None,
    }
    (out / "profiler_info.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    (out / "profiler_metadata.json").write_text(json.dumps({"simulated": True}, indent=2), encoding="utf-8")

"""When the host launched each device task: ``trace_view.json``'s ``HostToDevice`` flows.

A task cannot start on the device before the host launched it, so a replay of a measured plan needs
each task's launch (docs/profile.md "Host release"). torch_npu's trace links them: a flow event
``ph: "s"``, ``cat: "HostToDevice"`` on a thread of the ``CANN`` process (inside the AscendCL or
``Node@launch`` call that submitted the task) and its ``ph: "f"`` twin, same ``id``, on the
``Ascend Hardware`` lane of the task, at the task's start. The launch is the start of the CANN call
that holds the flow's start (the flow's own time can fall a few µs after the device start, the call's
start never does); a flow outside any CANN call is its own time.

Folders without these rows (Level0 text exports without ``CANN`` rows, no ``trace_view.json``) have
no launches; the prediction then says what is missing (:mod:`airctl.predict.profiled`).
"""

from __future__ import annotations

import bisect
from array import array
from collections import defaultdict
from typing import Any

from airctl.profile.ascend.times import TimeValueError, us_to_ns

FLOW_CATEGORY = "hosttodevice"
HOST_PROCESS = "cann"


class LaunchCollector:
    """Fed the trace's flow events and CANN calls as they stream by; :meth:`resolve` pairs them."""

    def __init__(self) -> None:
        self.starts: dict[str, tuple[str, int]] = {}  # flow id -> (host thread, ns)
        self.ends: dict[str, tuple[str, str, int]] = {}  # flow id -> (device pid, device tid, ns)
        self.calls: dict[str, tuple[array, array]] = defaultdict(_pair)  # host thread -> call starts, ends

    def flow(self, e: dict[str, Any]) -> None:
        if str(e.get("cat", "")).lower() != FLOW_CATEGORY:
            return
        try:
            ts = us_to_ns(e.get("ts"))
        except TimeValueError:
            return
        fid = str(e.get("id"))
        if e.get("ph") == "s":
            self.starts[fid] = (str(e.get("tid")), ts)
        else:
            self.ends[fid] = (str(e.get("pid")), str(e.get("tid")), ts)

    def host_call(self, e: dict[str, Any]) -> None:
        """An X event of the CANN process (an AscendCL call, ``Node@launch``)."""
        try:
            start, dur = us_to_ns(e.get("ts")), us_to_ns(e.get("dur", 0))
        except TimeValueError:
            return
        starts, ends = self.calls[str(e.get("tid"))]
        starts.append(start)
        ends.append(start + max(dur, 0))

    def resolve(self, lane_of: Any) -> dict[tuple[str, int], int]:
        """(device lane, task start ns) -> launch ns. ``lane_of(pid, tid)`` names a device thread's lane
        as the hardware spans name it (``"2"`` for stream 2)."""
        index: dict[str, tuple[list[int], array]] = {}
        for tid, (starts, ends) in self.calls.items():
            order = sorted(range(len(starts)), key=starts.__getitem__)
            index[tid] = ([starts[i] for i in order], array("q", (ends[i] for i in order)))
        out: dict[tuple[str, int], int] = {}
        for fid, (pid, tid, task_ns) in self.ends.items():
            start = self.starts.get(fid)
            if start is None:
                continue
            host_tid, flow_ns = start
            launch = flow_ns
            calls = index.get(host_tid)
            if calls is not None:
                k = bisect.bisect_right(calls[0], flow_ns) - 1
                if k >= 0 and calls[1][k] >= flow_ns:
                    launch = calls[0][k]
            out[(lane_of(pid, tid), task_ns)] = launch
        self.starts, self.ends, self.calls = {}, {}, defaultdict(_pair)
        return out


def _pair() -> tuple[array, array]:
    return array("q"), array("q")

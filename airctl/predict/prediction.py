"""The ``predicted`` record: what ``--json``, the terminal and report.html say of a prediction.

    predicted: {step_us, span_us, launch_us, streams: {name: busy_us}, overlap_us,
                critical_path: [node, ...], critical_path_us, unmatched: n, unmatched_nodes: [...],
                times_from, times_kind, device, gap_us, latency_us, graphs: [...], measured_us?}

``step_us`` = the replayed span of every graph, one after the other, plus the mode's launch cost
per graph execution (:data:`LAUNCH_US`, an assumption stated in docs/profile.md and shown in the
output; ``--launch-us`` replaces it). ``measured_us`` is set when the plan replayed is the one a
profiler folder measured: the two should agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airctl.modes import MAX_AUTOTUNE, NPUGRAPH_EX, REDUCE_OVERHEAD

# host-side cost of one graph execution, µs: GE's RunGraph (max-autotune) or an aclgraph replay
LAUNCH_US = {MAX_AUTOTUNE: 40.0, REDUCE_OVERHEAD: 15.0, NPUGRAPH_EX: 15.0}
MAX_LISTED = 50  # unmatched nodes named in the record; the count is always whole


@dataclass
class Prediction:
    times_from: str
    times_kind: str  # "table", "estimate" or "profile"
    device: str | None
    launch_us: float
    gap_us: float
    latency_us: float
    unmatched: list[str] = field(default_factory=list)
    graphs: list[str] = field(default_factory=list)  # "<graph>/<stage>" replayed
    measured_us: float | None = None


def predicted_record(summary: Any, pred: Prediction) -> dict[str, Any]:
    """The record for ``summary`` (a :class:`~airctl.profile.summary.ProfileSummary` of the replay)."""
    span_us = summary.span_s * 1e6
    rec: dict[str, Any] = {
        "step_us": span_us + pred.launch_us,
        "span_us": span_us,
        "launch_us": pred.launch_us,
        "streams": {s.stream: s.busy_s * 1e6 for s in summary.streams},
        "overlap_us": summary.overlap_s * 1e6,
        "critical_path": [p.node for p in summary.critical_path],
        "critical_path_kernels": [p.node for p in summary.critical_path if p.work_s > 0],
        "critical_path_us": summary.critical_path_s * 1e6,
        "unmatched": len(pred.unmatched),
        "unmatched_nodes": pred.unmatched[:MAX_LISTED],
        "times_from": pred.times_from,
        "times_kind": pred.times_kind,
        "estimate": pred.times_kind == "estimate",
        "device": pred.device,
        "gap_us": pred.gap_us,
        "latency_us": pred.latency_us,
        "graphs": list(pred.graphs),
    }
    if pred.measured_us is not None:
        rec["measured_us"] = pred.measured_us
        rec["error_pct"] = 100.0 * (span_us - pred.measured_us) / pred.measured_us if pred.measured_us else 0.0
    return rec

"""The ``predicted`` record: what ``--json``, the terminal and report.html say of a prediction.

    predicted: {step_us, span_us, launch_us, streams: {name: busy_us}, overlap_us,
                critical_path: [node, ...], critical_path_us, unmatched: n, unmatched_nodes: [...],
                ignored_rows: [{row, why}], races: [finding, ...], racy, valid_step_us,
                bandwidth_bound_us, bandwidth_bound_pct, core_bound_us, conditions: {device, pools, ...},
                memory: {peak_bytes, peak_at, by_stream, stretched, unbounded, live_bytes, measured?, ...},
                times_from, times_kind, device, gap_us, latency_us, graphs: [...],
                measured_us?, error_pct?, unexplained_us?, unexplained_pct?, missing?: [...]}

``step_us`` is :mod:`.step`'s one definition (the replayed span of every graph plus the mode's
launch cost per graph execution). When the verifier finds a race in the plan's mode, ``racy`` is
true, ``races`` lists the findings and ``valid_step_us`` is the step of the race-free twin — the
only number that may be compared with another plan. ``measured_us`` is set when the plan replayed
is the one a profiler folder measured: the two should agree, and what the folder lacks for that is
named in ``missing`` with the share of the measured step left unexplained.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airctl.predict.plan import FREE, KERNEL, MARKER, ReplayPlan
from airctl.predict.times import TimesTable, op_keys

MAX_LISTED = 50  # unmatched nodes and ignored rows named in the record; the counts are always whole


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
    races: list[dict[str, Any]] = field(default_factory=list)  # the verifier's errors in the plan's mode
    valid_span_us: float | None = None  # the race-free twin's span, when racy
    ignored_rows: list[dict[str, str]] = field(default_factory=list)  # the first MAX_LISTED
    ignored_count: int = 0  # all of them
    bandwidth_bound_us: float = 0.0
    core_bound_us: float = 0.0
    conditions: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # what a profiler folder lacks to explain its step
    memory: dict[str, Any] | None = None  # predicted device memory (airctl/predict/memory.py), measured beside it


def predicted_record(summary: Any, pred: Prediction) -> dict[str, Any]:
    """The record for ``summary`` (a :class:`~airctl.profile.summary.ProfileSummary` of the replay)."""
    span_us = summary.span_s * 1e6
    step_us = span_us + pred.launch_us
    rec: dict[str, Any] = {
        "step_us": step_us,
        "span_us": span_us,
        "launch_us": pred.launch_us,
        "streams": {s.stream: s.busy_s * 1e6 for s in summary.streams},
        "overlap_us": summary.overlap_s * 1e6,
        "critical_path": [p.node for p in summary.critical_path],
        "critical_path_kernels": [p.node for p in summary.critical_path if p.work_s > 0],
        "critical_path_us": summary.critical_path_s * 1e6,
        "unmatched": len(pred.unmatched),
        "unmatched_nodes": pred.unmatched[:MAX_LISTED],
        "ignored_rows": pred.ignored_rows,
        "ignored_row_count": pred.ignored_count,
        "races": pred.races,
        "racy": bool(pred.races),
        "valid_step_us": (pred.valid_span_us + pred.launch_us) if pred.valid_span_us is not None else step_us,
        "bandwidth_bound_us": pred.bandwidth_bound_us,
        "bandwidth_bound_pct": 100.0 * pred.bandwidth_bound_us / span_us if span_us else 0.0,
        "core_bound_us": pred.core_bound_us,
        "conditions": pred.conditions,
        "memory": pred.memory,
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
        short = max(pred.measured_us - span_us, 0.0)
        rec["unexplained_us"] = short if pred.missing else 0.0
        rec["unexplained_pct"] = 100.0 * rec["unexplained_us"] / pred.measured_us if pred.measured_us else 0.0
        rec["missing"] = list(pred.missing)
    return rec


def ignored_rows(table: TimesTable, plans: list[ReplayPlan]) -> tuple[list[dict[str, str]], int]:
    """The first :data:`MAX_LISTED` rows of ``table`` that charge nothing, and how many there are: rows naming
    only tasks that run no kernel in the mode (views in aclgraph modes, GE's shape-only ops), or no node or
    op of the run (a misspelt name)."""
    if table.label != "table":
        return [], 0
    kinds: dict[str, set[str]] = {}
    op_kinds: dict[str, set[str]] = {}
    for plan in plans:
        for t in plan.tasks:
            for name in (t.name, *t.aliases):
                kinds.setdefault(name, set()).add(t.kind)
            for key in (k for op in (t.op, *(t.meta.get("fx_ops") or ())) for k in op_keys(op)):
                op_kinds.setdefault(key, set()).add(t.kind)
    mode = plans[0].mode if plans else ""
    out: list[dict[str, str]] = []
    count = 0
    for rows, seen, what in ((table.rows, kinds, "node"), (table.op_rows, op_kinds, "op")):
        for name, row in rows.items():
            got = seen.get(name)
            why = (f"names no {what} of the run" if got is None else
                   f"runs no kernel in {mode} (not charged)" if KERNEL not in got and got & {FREE, MARKER} else None)
            if why is None:
                continue
            count += 1
            if len(out) < MAX_LISTED:  # a huge table of another model: listed up to here, counted whole
                out.append({"row": name, "line": str(row.line), "why": why})
    return out, count

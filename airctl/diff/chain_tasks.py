"""The profiled tasks of a run, by task name and by graph node, for a node's origin chain.

``airctl profile`` leaves ``profile/trace.json`` in its run (:mod:`airctl.profile.chrome_trace`):
one complete event per task, named after the graph node it ran and carrying that node in
``args.node`` (for a real profiler's folder, :mod:`airctl.profile.ledger_link` renamed the tasks
after the ledger's nodes first). A task named after a GE op (``MatMul_1``) keeps that name, and the
chain finds the op's FX node. Tasks of one name are summed over steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airctl.ledger_files import PROFILE_DIR, TRACE_FILE
from airctl.limits import PROFILE_TRACE_BYTES
from airctl.safe_files import read_json


def tasks_of(root: Path) -> dict[str, Any] | None:
    """``{"file", "by_task", "by_node"}`` of the run's profile trace, or None when it has none."""
    path = root / PROFILE_DIR / TRACE_FILE
    if not path.is_file():
        return None
    doc = read_json(path, PROFILE_TRACE_BYTES, "profile trace",
                    too_large="profile fewer steps (`airctl profile --steps`)",
                    unreadable="profile the run again (`airctl profile`)")
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    lanes: dict[tuple[Any, Any], str] = {}
    rows: dict[tuple[str, Any, Any], dict[str, Any]] = {}
    for e in events if isinstance(events, list) else []:
        if not isinstance(e, dict):
            continue
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            lanes[(e.get("pid"), e.get("tid"))] = str((e.get("args") or {}).get("name", "")).removeprefix("stream ")
        if e.get("ph") != "X" or e.get("cat") == "host":
            continue
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        task = str(e.get("name", "")).split("#")[0]
        key = (task, e.get("pid"), e.get("tid"))
        row = rows.setdefault(key, {"task": task, "node": args.get("node"), "op": args.get("op"),
                                    "stream": (e.get("pid"), e.get("tid")), "count": 0, "total_us": 0.0})
        row["count"] += 1
        row["total_us"] += float(e.get("dur") or 0.0)
    by_task: dict[str, list[dict[str, Any]]] = {}
    by_node: dict[str, list[dict[str, Any]]] = {}
    for row in rows.values():
        row["stream"] = lanes.get(row["stream"]) or str(row["stream"][1])
        row["total_us"] = round(row["total_us"], 3)
        by_task.setdefault(row["task"], []).append(row)
        if row["node"]:
            by_node.setdefault(str(row["node"]).split("#")[0], []).append(row)
    return {"file": str(path), "by_task": by_task, "by_node": by_node}


def task_rows(tasks: dict[str, Any] | None, name: str, by_task: bool) -> list[dict[str, Any]]:
    """The tasks named ``name`` (``by_task``), or those that ran node or GE op ``name``."""
    if not tasks:
        return []
    if by_task:
        return list(tasks["by_task"].get(name, []))
    return list(tasks["by_node"].get(name, [])) or [r for r in tasks["by_task"].get(name, []) if not r["node"]]

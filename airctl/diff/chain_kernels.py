"""Device kernel time mapped to the user's source lines through a run's origin chains
(``airctl show --kernels PROFILER_DIR``): how much of what the NPU spent running kernels this run's
ledger explains, line by line, and what it cannot explain, with the reason.

Each kernel task of the profile (a row ``{task, type, stream, us, kind, step}``; the profiler's sync tasks,
``EVENT_RECORD``/``EVENT_WAIT`` and the like, are not kernels: counted apart) is resolved, in order:

1. **by name**: a GE op of any GE stage named like the task (``MatMul_1``), or an FX node of any
   stage: its origin chain's source line (:func:`airctl.diff.chain.graph_chains`: the line
   ``airctl show --node`` prints, the pass file's line for a node a user pass made);
2. **by type**: the task's type (``Mul``) is the op of exactly one FX node of the final stage
   (``aten.mul.Tensor``), which no GE op of that type claims, and no step ran two such tasks that
   no name maps: that node's line;
3. otherwise unmapped, with the reason: an HCCL communication task (named by HCCL, not by a graph
   op), a node without a source line (TorchAir added it), or nothing in the ledger of that name or type.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from airctl.diff.chain import Chain, fx_stages, graph_chains
from airctl.diff.chain_dynamo import op_base
from airctl.diff.chain_graphs import Snapshots
from airctl.ledger.reader import Ledger

SYNC_TYPES = frozenset({"EVENT_RECORD", "EVENT_WAIT", "NOTIFY_RECORD", "NOTIFY_WAIT", "STREAM_WAIT",
                        "EVENT_RESET", "MEMCPY_ASYNC_SYNC"})
TARGET_SHARE = 0.95


class _Index:
    """Task names and types -> (graph, chain) of a ledger, from every graph's chains."""

    def __init__(self, led: Ledger) -> None:
        snaps = Snapshots(led)
        self.by_name: dict[str, tuple[str, Chain]] = {}
        self.by_type: dict[str, list[tuple[str, Chain]]] = defaultdict(list)
        ge_types: set[str] = set()
        for gid in led.graph_ids():
            ge = fx_stages(led, gid)[2]
            _, chains = graph_chains(led, gid, None, snaps)
            for c in chains:
                for g in c.ge_ops:
                    self.by_name.setdefault(g["name"], (gid, c))
                    ge_types.add(str(g["op"]).lower())
                for s in c.stages:
                    if s.name:
                        self.by_name.setdefault(s.name, (gid, c))
                last = c.stages[-1] if c.stages else None
                if last is not None and last.name and last.op and "." in last.op:
                    self.by_type[op_base(last.op).lower()].append((gid, c))
            for stage in ge:  # ops no FX node names (Consts, casts TorchAir added): known, without a chain
                for op in snaps(stage).nodes:
                    self.by_name.setdefault(op.name, (gid, Chain(op.name, "GE op", gid, op.name, op=op.op)))
        self.ge_types = ge_types

    def find(self, task: str, kind: str, per_step: int) -> tuple[str | None, Chain | None, str]:
        """(graph, chain, how) of a task, or (None, None, why not); ``per_step``: the most tasks of its
        type a step ran that no name maps."""
        hit = self.by_name.get(task)
        if hit is not None:
            return hit[0], hit[1], "by name"
        typ = kind.lower()
        cands = self.by_type.get(typ, [])
        if len(cands) == 1 and typ not in self.ge_types:
            if per_step > 1:
                return None, None, (f"no op of that name; {per_step} such {kind} tasks a step for the one "
                                    f"{cands[0][1].op} node")
            return cands[0][0], cands[0][1], f"by type: the only {cands[0][1].op} node"
        if len(cands) > 1:
            return None, None, f"no op of that name; {len(cands)} nodes of type {kind}: ambiguous"
        if cands:
            return None, None, (f"no op of that name; the ledger's GE ops of type {kind} have other names "
                                "(a profile of another run?)")
        return None, None, f"no GE op or FX node named {task}, nor a node of type {kind}"


def kernel_map(tasks: Iterable[dict[str, Any]], led: Ledger) -> dict[str, Any]:
    """``{"kernel_us", "mapped_us", "share", "sync_us", "mapped_by", "lines", "unmapped", "target"}``: per
    source line the kernel time and tasks it explains, the time mapped by name and by type, and per
    unmapped task name its time and reason."""
    index = _Index(led)
    kernel_us = mapped_us = sync_us = 0.0
    by_how: dict[str, float] = defaultdict(float)
    lines: dict[str, dict[str, Any]] = {}
    unmapped: dict[str, dict[str, Any]] = {}
    rows = list(tasks)
    nameless: dict[tuple[Any, str], int] = defaultdict(int)  # (step, type) -> tasks no name maps
    for t in rows:
        if str(t["task"]).split("#")[0] not in index.by_name:
            nameless[(t.get("step"), str(t.get("type") or ""))] += 1
    most: dict[str, int] = defaultdict(int)
    for (_step, typ), n in nameless.items():
        most[typ] = max(most[typ], n)
    for t in rows:
        us = float(t["us"])
        if str(t.get("type") or "").upper() in SYNC_TYPES or str(t["task"]).upper() in SYNC_TYPES:
            sync_us += us
            continue
        kernel_us += us
        name, typ = str(t["task"]).split("#")[0], str(t.get("type") or "")
        gid, chain, how = index.find(name, typ, most[typ])
        source = chain.source if chain is not None else None
        if chain is not None and source:
            row = lines.setdefault(source, {"source": source, "us": 0.0, "tasks": {}, "nodes": set()})
            row["us"] += us
            row["tasks"][name] = how
            row["nodes"].add(f"{gid}:{chain.node}")
            mapped_us += us
            by_how[how.split(":")[0]] += us
            continue
        if t.get("kind") == "communication":
            reason = "an HCCL communication task: HCCL names it, no graph op does"
        elif chain is not None:
            reason = (f"{how}: {chain.found_as} {chain.node} has no source line"
                      + (f" ({chain.origin_note})" if chain.origin_note else
                         " (TorchAir added it in conversion)" if chain.found_as == "GE op" else ""))
        else:
            reason = how
        row = unmapped.setdefault(name, {"task": name, "type": t.get("type"), "us": 0.0, "count": 0,
                                         "reason": reason})
        row["us"] += us
        row["count"] += 1
    out_lines = sorted(({"source": r["source"], "us": round(r["us"], 3), "tasks": r["tasks"],
                         "nodes": sorted(r["nodes"])} for r in lines.values()), key=lambda r: -r["us"])
    return {"kernel_us": round(kernel_us, 3), "mapped_us": round(mapped_us, 3),
            "share": mapped_us / kernel_us if kernel_us else None, "sync_us": round(sync_us, 3),
            "mapped_by": {k: round(v, 3) for k, v in by_how.items()},
            "target": TARGET_SHARE, "lines": out_lines,
            "unmapped": sorted(({**r, "us": round(r["us"], 3)} for r in unmapped.values()), key=lambda r: -r["us"])}

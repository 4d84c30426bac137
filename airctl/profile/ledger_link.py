"""Profiler tasks renamed after the graph nodes of an airctl ledger (``profile analyze --run RUN``).

A task named like a GE op of the ledger's last GE stage (``MatMul_1``) maps to the FX node that op
came from (``_fx_tensor_name``); a task named like an FX node maps to it; the n-th ``aten::mm`` of a
step maps to the n-th ``aten.mm.*`` node when their counts agree. Linked events carry the node's
op, source line and module.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from airctl.execute.timeline import OpEvent, Timeline


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
                names = op.fx_nodes()
                origin = fx.get(names[0]) if names else None
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

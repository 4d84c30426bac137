"""One table of a run's graph breaks, recompiles, recaptures and compile-cache decisions, in order.

The ledger keeps what happened as it was heard (``events``: Dynamo's and TorchAir's messages,
read by :mod:`airctl.io.why_log`; ``captures``: npugraph_ex's bookkeeping); this module says it to
a person — one class per row, the reason in words, where in the user's code, the graph it made,
and what would avoid it (:mod:`airctl.why.hints`). Rows recorded by a run and rows read from the
same script's imported log come out the same, because both pass through here.

>>> from airctl.ledger.index import RunIndex
>>> t = why_table(RunIndex.from_json({"graphs": [], "events": [{"kind": "recompile", "seq": 1,
...     "reason": "x.size(0) was 4, now 8", "file": "m.py", "line": 16, "guard": "shape",
...     "input": "x", "dim": 0}]}))
>>> (t.rows[0].cls, t.rows[0].where, summary_line(t))
('recompile', 'm.py:16', '1 recompile: airctl why')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airctl.ledger.index import RunIndex
from airctl.why.hints import hint_for

# event kind -> class shown (the five classes of docs/why.md)
CLASSES = {"graph_break": "graph break", "recompile": "recompile", "recompile_limit": "recompile",
           "recapture": "recapture", "fallback": "recapture", "cache_hit": "compile cache",
           "cache_miss": "compile cache", "cache_invalidated": "compile cache", "cache_dropped": "compile cache",
           "static_kernel_hit": "kernel cache",
           "static_kernel_miss": "kernel cache"}
WHAT = {"graph_break": "graph break", "recompile": "recompile", "recompile_limit": "recompile limit",
        "recapture": "recapture", "fallback": "fell back to eager", "cache_hit": "hit", "cache_miss": "miss",
        "cache_invalidated": "invalidated", "cache_dropped": "dropped", "static_kernel_hit": "hit",
        "static_kernel_miss": "miss"}
COUNTED = (("graph_break", "graph break", "graph breaks"), ("recompile", "recompile", "recompiles"),
           ("recompile_limit", "recompile limit", "recompile limits"), ("recapture", "recapture", "recaptures"),
           ("fallback", "eager fallback", "eager fallbacks"), ("cache_miss", "cache miss", "cache misses"),
           ("cache_invalidated", "cache invalidation", "cache invalidations"),
           ("cache_dropped", "dropped cache", "dropped caches"),
           ("cache_stale", "stale cache hit", "stale cache hits"),
           ("static_kernel_miss", "kernel cache miss", "kernel cache misses"))


NONE = "no graph breaks, recompiles, recaptures or compile-cache misses"


@dataclass
class WhyRow:
    """One event as ``airctl why`` shows it."""

    n: int  # 1-based, in the order it happened
    kind: str  # graph_break, recompile, recompile_limit, recapture, fallback, cache_hit, cache_miss, ...
    cls: str  # the class shown: graph break, recompile, recapture, compile cache, kernel cache
    what: str  # the event within its class, in words
    reason: str
    where: str | None  # file:line (the user's code, or the library's)
    graph: str | None  # the ledger graph it produced or concerns
    hint: str | None
    compile_id: str | None = None  # Dynamo's frame/compile id
    detail: dict[str, Any] = field(default_factory=dict)  # the recorded event, as kept in index.json

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "class": self.cls, "kind": self.kind, "what": self.what, "reason": self.reason,
                "where": self.where, "graph": self.graph, "compile_id": self.compile_id, "hint": self.hint,
                "detail": self.detail}


@dataclass
class WhyTable:
    """Every row of a run, and where they came from (``recorded`` by the run, or ``imported``)."""

    run_id: str | None
    origin: str
    rows: list[WhyRow]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for row in self.rows:
            kind = "cache_stale" if row.detail.get("stale") else row.kind
            out[kind] = out.get(kind, 0) + 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "origin": self.origin, "summary": summary_line(self),
                "counts": self.counts(), "rows": [r.to_json() for r in self.rows]}


def _where(data: dict[str, Any]) -> str | None:
    file, line = data.get("file"), data.get("line")
    if not file:
        return None
    return f"{file}:{line}" if line is not None else str(file)


def _capture_rows(index: RunIndex) -> list[tuple[float, dict[str, Any]]]:
    """npugraph_ex's recaptures and fallbacks (a graph's first capture is not a problem: not listed)."""
    rows = []
    for position, c in enumerate(index.captures or []):
        if c.get("event") in ("recapture", "fallback"):
            seq = c.get("seq")
            rows.append((float(seq) if isinstance(seq, (int, float)) else float(position), {**c, "kind": c["event"]}))
    return rows


def why_table(index: RunIndex) -> WhyTable:
    """The run's events and captures, merged in the order they happened, each with its hint."""
    items: list[tuple[float, dict[str, Any]]] = [(float(e.seq), e.to_json()) for e in index.events or []]
    items += _capture_rows(index)
    items.sort(key=lambda item: item[0])  # a stable sort: equal keys keep their recorded order
    rows: list[WhyRow] = []
    seen: list[dict[str, Any]] = []
    # Dynamo logs the guard failure, then finds the limit reached: that compile never happened (its row is the limit's)
    limited = {(d.get("compile_id"), d.get("file")) for _, d in items if d.get("kind") == "recompile_limit"}
    for _seq, data in items:
        kind = str(data.get("kind"))
        if kind not in CLASSES or kind == "recompile" and (data.get("compile_id"), data.get("file")) in limited:
            continue
        reason = str(data.get("reason") or WHAT[kind])
        if kind == "fallback" and data.get("call") is not None:
            reason += f" (call {data['call']})"
        if kind == "graph_break" and data.get("gb_id"):
            reason += f" ({data['gb_id']})"  # Dynamo's graph-break id: its page on pytorch's graph-break site
        graph = data.get("graph") or data.get("graph_name")
        what = "stale hit" if data.get("stale") else WHAT[kind]
        rows.append(WhyRow(n=len(rows) + 1, kind=kind, cls=CLASSES[kind], what=what, reason=reason,
                           where=_where(data), graph=str(graph) if graph is not None else None,
                           hint=hint_for(kind, data, seen), compile_id=data.get("compile_id"), detail=data))
        seen.append(data)
    origin = "imported" if index.imported is not None else "recorded"
    return WhyTable(run_id=index.run_id, origin=origin, rows=rows)


def summary_line(table: WhyTable) -> str:
    """``3 recompiles, 1 graph break: airctl why``, or the one line that says none occurred."""
    counts = table.counts()
    parts = [f"{counts[k]} {one if counts[k] == 1 else many}" for k, one, many in COUNTED if counts.get(k)]
    if not parts:
        return NONE
    return ", ".join(parts) + ": airctl why"

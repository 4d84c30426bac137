"""One table of a run's graph breaks, recompiles, recaptures and compile-cache decisions, in order.

The ledger keeps what happened as it was heard (``events``: Dynamo's and TorchAir's messages,
read by :mod:`airctl.io.why_log`; ``captures``: npugraph_ex's bookkeeping); this module says it to
a person — one class per row, the reason in words, where in the user's code, the graph it made,
and what would avoid it (:mod:`airctl.why.hints`). Rows recorded by a run and rows read from the
same script's imported log come out the same, because both pass through :func:`table_rows`.

A table is a source of rows, made again for each reading, and the counts, so that a run with
200k events is shown (and written as JSON) one row at a time (:mod:`airctl.why.stream`).

>>> from airctl.ledger.index import RunIndex
>>> t = why_table(RunIndex.from_json({"graphs": [], "events": [{"kind": "recompile", "seq": 1,
...     "reason": "x.size(0) was 4, now 8", "file": "m.py", "line": 16, "guard": "shape",
...     "input": "x", "dim": 0}]}))
>>> (row,) = t.iter_rows()
>>> (row.cls, row.where, summary_line(t))
('recompile', 'm.py:16', '1 recompile: airctl why')
"""

from __future__ import annotations

import heapq
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from airctl.io.paths import is_airctl_file, package_relative
from airctl.ledger.index import RunIndex
from airctl.why.hints import hint_for, recompile_key


@dataclass(frozen=True)
class Kind:
    """How one event kind is shown: its row's class (the five of docs/why.md) and word, and how the
    summary line counts it (``one``/``many``; None: not counted there)."""

    cls: str | None  # None: counted only, never a row of its own
    what: str | None
    one: str | None = None
    many: str | None = None


# every event kind a row or the summary line knows, in the summary line's order
KINDS = {
    "graph_break": Kind("graph break", "graph break", "graph break", "graph breaks"),
    "recompile": Kind("recompile", "recompile", "recompile", "recompiles"),
    "recompile_limit": Kind("recompile", "recompile limit", "recompile limit", "recompile limits"),
    "recapture": Kind("recapture", "recapture", "recapture", "recaptures"),
    "fallback": Kind("recapture", "fell back to eager", "eager fallback", "eager fallbacks"),
    "cache_hit": Kind("compile cache", "hit"),
    "cache_miss": Kind("compile cache", "miss", "cache miss", "cache misses"),
    "cache_invalidated": Kind("compile cache", "invalidated", "cache invalidation", "cache invalidations"),
    "cache_dropped": Kind("compile cache", "dropped", "dropped cache", "dropped caches"),
    "cache_stale": Kind(None, None, "stale cache hit", "stale cache hits"),  # a cache_hit that was stale
    "static_kernel_hit": Kind("kernel cache", "hit"),
    "static_kernel_miss": Kind("kernel cache", "miss", "kernel cache miss", "kernel cache misses"),
}
ROWS = {kind: k for kind, k in KINDS.items() if k.cls is not None}  # the kinds that are rows


NONE = "no graph breaks, recompiles, recaptures or compile-cache misses"


@dataclass
class WhyRow:
    """One event as ``airctl why`` shows it."""

    n: int  # 1-based, in the order it happened
    kind: str  # graph_break, recompile, recompile_limit, recapture, fallback, cache_hit, cache_miss, ...
    cls: str  # the class shown: graph break, recompile, recapture, compile cache, kernel cache
    what: str  # the event within its class, in words
    reason: str
    where: str | None  # file:line (the user's code, or the library's, relative to its package)
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
    """Every row of a run, and where they came from (``recorded`` by the run, or ``imported``).

    ``source`` makes the rows again on each call (in order); ``counted`` is what :class:`Tally` counted
    of the same events; ``failed``: the run's error when it failed (the table then says where to look)."""

    run_id: str | None
    origin: str
    source: Callable[[], Iterable[WhyRow]]
    counted: dict[str, int]
    failed: str | None = None

    def iter_rows(self) -> Iterator[WhyRow]:
        return iter(self.source())

    def counts(self) -> dict[str, int]:
        return dict(self.counted)

    def _head(self) -> dict[str, Any]:
        head = {"run_id": self.run_id, "origin": self.origin, "summary": summary_line(self), "counts": self.counts()}
        if self.failed is not None:
            head["failed"] = self.failed
        return head

    def to_json(self) -> dict[str, Any]:
        return {**self._head(), "rows": [r.to_json() for r in self.iter_rows()]}

    def write_json(self, out: TextIO) -> None:
        """:meth:`to_json` as ``json.dumps(indent=2)`` writes it, one row at a time (a bounded memory)."""
        head = json.dumps(self._head(), indent=2)
        out.write(head[:-2] + ',\n  "rows": [')
        first = True
        for row in self.iter_rows():
            text = json.dumps(row.to_json(), indent=2).replace("\n", "\n    ")
            out.write(("\n    " if first else ",\n    ") + text)
            first = False
        out.write("]\n}\n" if first else "\n  ]\n}\n")


def _where(data: dict[str, Any]) -> str | None:
    """The user's line: the call that changed a recompiled input when it is known, else the event's own
    ``file:line``; an installed library's file relative to its package (``transformers/...``)."""
    file, line = (data.get("call_file"), data.get("call_line")) if data.get("call_file") else (data.get("file"),
                                                                                               data.get("line"))
    if not file or is_airctl_file(str(file)):  # airctl's own code is never the user's line
        return None
    path = package_relative(str(file)) or str(file)
    return f"{path}:{line}" if line is not None else path


def limit_key(data: dict[str, Any]) -> tuple[Any, Any]:
    """What ties a recompile to the recompile limit Dynamo found right after it: (compile id, file)."""
    return data.get("compile_id"), data.get("file")


def _skipped(kind: str, data: dict[str, Any], limited: set[tuple[Any, Any]]) -> bool:
    # Dynamo logs the guard failure, then finds the limit reached: that compile never happened (its row is the limit's)
    return kind not in ROWS or kind == "recompile" and limit_key(data) in limited


class Tally:
    """What the summary counts, event by event (each event's kind, a stale hit as ``cache_stale``, the
    recompiles a recompile limit stopped left out): the rows' counts without making the rows."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.recompiles: Counter[tuple[Any, Any]] = Counter()
        self.limited: set[tuple[Any, Any]] = set()

    def add(self, data: dict[str, Any]) -> None:
        kind = str(data.get("kind"))
        if kind == "recompile":
            self.recompiles[limit_key(data)] += 1
        elif kind in ROWS:
            if kind == "recompile_limit":
                self.limited.add(limit_key(data))
            self.kinds["cache_stale" if data.get("stale") else kind] += 1

    def counts(self) -> dict[str, int]:
        out = dict(self.kinds)
        recompiles = sum(n for key, n in self.recompiles.items() if key not in self.limited)
        if recompiles:
            out["recompile"] = recompiles
        return out


def capture_rows(captures: Iterable[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """npugraph_ex's recaptures and fallbacks as events, in order (a graph's first capture is not a problem:
    not listed)."""
    rows = []
    for position, c in enumerate(captures or []):
        if c.get("event") in ("recapture", "fallback"):
            seq = c.get("seq")
            rows.append({**c, "kind": c["event"], "seq": float(seq) if isinstance(seq, (int, float)) else
                         float(position)})
    rows.sort(key=lambda c: c["seq"])  # a stable sort: equal keys keep their recorded order
    return rows


def table_rows(events: Iterable[dict[str, Any]], captures: list[dict[str, Any]],
               limited: set[tuple[Any, Any]]) -> Iterator[WhyRow]:
    """The rows of ``events`` (in the order they happened) merged with ``captures`` (:func:`capture_rows`),
    each with its hint."""
    n = 0
    seen: set[tuple[Any, ...]] = set()
    merged = heapq.merge(events, captures, key=lambda d: float(d.get("seq") or 0))
    for data in merged:
        kind = str(data.get("kind"))
        if _skipped(kind, data, limited):
            continue
        shown = ROWS[kind]
        reason = str(data.get("reason") or shown.what)
        if kind == "fallback" and data.get("call") is not None:
            reason += f" (call {data['call']})"
        if kind == "graph_break" and data.get("gb_id"):
            reason += f" ({data['gb_id']})"  # Dynamo's graph-break id: its page on pytorch's graph-break site
        graph = data.get("graph") or data.get("graph_name")
        what = "stale hit" if data.get("stale") else str(shown.what)
        n += 1
        yield WhyRow(n=n, kind=kind, cls=str(shown.cls), what=what, reason=reason, where=_where(data),
                     graph=str(graph) if graph is not None else None, hint=hint_for(kind, data, seen),
                     compile_id=data.get("compile_id"), detail=data)
        key = recompile_key(data)
        if key is not None:
            seen.add(key)


def failure_of(index: RunIndex) -> str | None:
    """The first line of a failed run's error, or its status (None for a run that did not fail)."""
    if index.status in (None, "ok", "running", "planned"):
        return None
    lines = str(index.error or "").strip().splitlines()
    return lines[0] if lines else str(index.status)


def table_of(index: RunIndex, events: Callable[[], Iterable[dict[str, Any]]], counting: Tally) -> WhyTable:
    """The table of the run ``index`` describes: the rows of ``events()`` (its events in the order they
    happened, read again for each reading), which ``counting`` has counted, merged with its captures."""
    captures = capture_rows(index.captures)
    for capture in captures:
        counting.add(capture)
    limited = set(counting.limited)  # the recompiles a recompile limit stopped are not rows
    origin = "imported" if index.imported is not None else "recorded"
    return WhyTable(index.run_id, origin, lambda: table_rows(events(), captures, limited), counting.counts(),
                    failure_of(index))


def why_table(index: RunIndex) -> WhyTable:
    """The run's events and captures, merged in the order they happened, each with its hint."""
    events = sorted((e.to_json() for e in index.events or []), key=lambda d: float(d["seq"]))
    counting = Tally()
    for data in events:
        counting.add(data)
    return table_of(index, lambda: events, counting)


def summary_line(table: WhyTable) -> str:
    """``3 recompiles, 1 graph break: airctl why``, or the one line that says none occurred."""
    counts = table.counts()
    parts = [f"{counts[k]} {shown.one if counts[k] == 1 else shown.many}" for k, shown in KINDS.items()
             if shown.one is not None and counts.get(k)]
    if not parts:
        return NONE
    return ", ".join(parts) + ": airctl why"

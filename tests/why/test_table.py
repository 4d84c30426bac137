"""``airctl why``'s table (airctl/why/): classes, order, hints, the summary line."""

from __future__ import annotations

from typing import Any

from airctl.ledger.index import RunIndex
from airctl.why import summary_line, why_table


def index(events: list[dict[str, Any]], captures: list[dict[str, Any]] | None = None, **more: Any) -> RunIndex:
    return RunIndex.from_json({"graphs": [], "events": events, **({"captures": captures} if captures else {}), **more})


def recompile(seq: float, old: int, new: int) -> dict[str, Any]:
    return {"kind": "recompile", "seq": seq, "reason": f"x.size(0) was {old}, now {new}", "file": "m.py", "line": 16,
            "guard": "shape", "input": "x", "dim": 0, "graph": f"{seq}-forward"}


def test_events_and_captures_merge_in_the_order_they_happened() -> None:
    t = why_table(index([recompile(1.0, 4, 8), recompile(3.0, 8, 16)], captures=[
        {"graph": "2-inference", "event": "capture", "call": 1, "reason": "first call", "seq": 0.5},
        {"graph": "2-inference", "event": "recapture", "call": 2, "reason": "input shapes changed: [8]", "seq": 2.0},
        {"graph": "2-inference", "event": "fallback", "call": 3, "reason": "capture_limit 2 reached", "seq": 4.0}]))
    assert [(r.n, r.cls, r.what) for r in t.rows] == [
        (1, "recompile", "recompile"), (2, "recapture", "recapture"), (3, "recompile", "recompile"),
        (4, "recapture", "fell back to eager")]  # a graph's first capture is not listed
    assert t.rows[3].reason == "capture_limit 2 reached (call 3)"
    assert summary_line(t) == "2 recompiles, 1 recapture, 1 eager fallback: airctl why"


def test_a_second_recompile_on_the_same_size_says_automatic_dynamic_is_off() -> None:
    first, second = why_table(index([recompile(1, 4, 8), recompile(2, 8, 16)])).rows
    assert "mark_dynamic(x, 0)" in (first.hint or "") and "dynamic=False" not in (first.hint or "")
    assert "automatic dynamic shapes are off (dynamic=False)" in (second.hint or "")


def test_a_dtype_guard_is_not_something_a_dynamic_shape_avoids() -> None:
    row = why_table(index([{"kind": "recompile", "seq": 1, "reason": "x.dtype was Float, now Half",
                            "guard": "dtype", "input": "x"}])).rows[0]
    assert row.hint is not None and row.hint.startswith("no dynamic-shape choice covers a change of dtype")


def test_graph_breaks_keep_dynamos_own_hint() -> None:
    row = why_table(index([{"kind": "graph_break", "seq": 1, "reason": "Data-dependent branching", "file": "m.py",
                            "line": 17, "dynamo_hint": "Use `torch.cond` to express dynamic control flow."}])).rows[0]
    assert (row.cls, row.where) == ("graph break", "m.py:17")
    assert row.hint == "Use `torch.cond` to express dynamic control flow."


def test_cache_rows_say_what_changed_and_a_stale_hit_is_counted() -> None:
    t = why_table(index([
        {"kind": "cache_miss", "seq": 1, "reason": "compiled", "changed": ["options"]},
        {"kind": "cache_hit", "seq": 2, "reason": "loaded"},
        {"kind": "cache_hit", "seq": 3, "reason": "loaded a cache saved from different code", "stale": True,
         "cache": "/c/compiled_module"}]))
    assert [r.what for r in t.rows] == ["miss", "hit", "stale hit"]
    assert t.rows[0].hint is not None and "compile options" in t.rows[0].hint
    assert t.rows[1].hint is None and t.rows[2].hint is not None and "/c/compiled_module" in t.rows[2].hint
    assert summary_line(t) == "1 cache miss, 1 stale cache hit: airctl why"


def test_a_run_with_none_says_so_in_one_line() -> None:
    t = why_table(index([]))
    assert t.rows == [] and summary_line(t) == "no graph breaks, recompiles, recaptures or compile-cache misses"
    assert t.origin == "recorded"
    assert why_table(index([], imported={"sources": []})).origin == "imported"


def test_json_is_the_table_with_each_rows_recorded_detail() -> None:
    data = why_table(index([recompile(1, 4, 8)])).to_json()
    assert data["counts"] == {"recompile": 1} and data["summary"] == "1 recompile: airctl why"
    row = data["rows"][0]
    assert (row["class"], row["where"], row["graph"]) == ("recompile", "m.py:16", "1-forward")
    assert row["detail"]["guard"] == "shape"


def test_a_recompile_that_hit_the_limit_is_the_limits_row() -> None:
    limit = {"kind": "recompile_limit", "seq": 3, "reason": "recompile_limit (2) reached", "file": "m.py",
             "line": 16, "compile_id": "0/2", "limit": "recompile_limit"}
    t = why_table(index([recompile(1, 4, 8), {**recompile(2, 8, 16), "compile_id": "0/2"}, limit]))
    assert [r.kind for r in t.rows] == ["recompile", "recompile_limit"]
    assert summary_line(t) == "1 recompile, 1 recompile limit: airctl why"

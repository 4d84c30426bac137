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
    rows = list(t.iter_rows())
    assert [(r.n, r.cls, r.what) for r in rows] == [
        (1, "recompile", "recompile"), (2, "recapture", "recapture"), (3, "recompile", "recompile"),
        (4, "recapture", "fell back to eager")]  # a graph's first capture is not listed
    assert rows[3].reason == "capture_limit 2 reached (call 3)"
    assert summary_line(t) == "2 recompiles, 1 recapture, 1 eager fallback: airctl why"


def test_a_second_recompile_on_the_same_size_says_automatic_dynamic_is_off() -> None:
    first, second = why_table(index([recompile(1, 4, 8), recompile(2, 8, 16)])).iter_rows()
    assert "mark_dynamic(x, 0)" in (first.hint or "") and "dynamic=False" not in (first.hint or "")
    assert "automatic dynamic shapes are off (dynamic=False)" in (second.hint or "")


def test_a_dtype_guard_is_not_something_a_dynamic_shape_avoids() -> None:
    (row,) = why_table(index([{"kind": "recompile", "seq": 1, "reason": "x.dtype was Float, now Half",
                               "guard": "dtype", "input": "x"}])).iter_rows()
    assert row.hint is not None and row.hint.startswith("no dynamic-shape choice covers a change of dtype")


def test_graph_breaks_keep_dynamos_own_hint() -> None:
    (row,) = why_table(index([{"kind": "graph_break", "seq": 1, "reason": "Data-dependent branching", "file": "m.py",
                               "line": 17,
                               "dynamo_hint": "Use `torch.cond` to express dynamic control flow."}])).iter_rows()
    assert (row.cls, row.where) == ("graph break", "m.py:17")
    assert row.hint == "Use `torch.cond` to express dynamic control flow."


def test_cache_rows_say_what_changed_and_a_stale_hit_is_counted() -> None:
    t = why_table(index([
        {"kind": "cache_miss", "seq": 1, "reason": "compiled", "changed": ["options"]},
        {"kind": "cache_hit", "seq": 2, "reason": "loaded"},
        {"kind": "cache_hit", "seq": 3, "reason": "loaded a cache saved from different code", "stale": True,
         "cache": "/c/compiled_module"}]))
    rows = list(t.iter_rows())
    assert [r.what for r in rows] == ["miss", "hit", "stale hit"]
    assert rows[0].hint is not None and "compile options" in rows[0].hint
    assert rows[1].hint is None and rows[2].hint is not None and "/c/compiled_module" in rows[2].hint
    assert summary_line(t) == "1 cache miss, 1 stale cache hit: airctl why"


def test_a_run_with_none_says_so_in_one_line() -> None:
    t = why_table(index([]))
    assert not list(t.iter_rows())
    assert summary_line(t) == "no graph breaks, recompiles, recaptures or compile-cache misses"
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
    assert [r.kind for r in t.iter_rows()] == ["recompile", "recompile_limit"]
    assert summary_line(t) == "1 recompile, 1 recompile limit: airctl why"


def test_a_keyword_inputs_hint_is_python_that_marks_the_tensor_passed() -> None:
    (row,) = why_table(index([{**recompile(1, 16, 24), "input": "kwargs['input_ids']", "dim": 1,
                               "reason": "kwargs['input_ids'].size(1) was 16, now 24"}])).iter_rows()
    assert "torch._dynamo.mark_dynamic(input_ids, 1)" in (row.hint or "")
    call = (row.hint or "").split("torch._dynamo.mark_dynamic(", 1)[1].split(")", 1)[0]
    compile(f"f({call})", "<hint>", "eval")


def test_where_is_the_users_call_a_librarys_line_relative_to_its_package_never_airctls() -> None:
    import airctl.sim.patched_torch_device_word as word

    lib = "/venv/lib/python3.11/site-packages/transformers/utils/generic.py"
    rows = why_table(index([
        {**recompile(1, 4, 8), "file": lib, "line": 940, "call_file": "/w/train.py", "call_line": 31},
        {**recompile(2, 8, 16), "file": lib, "line": 940},
        {"kind": "graph_break", "seq": 3, "reason": "r", "file": word.__file__, "line": 77}])).iter_rows()
    assert [r.where for r in rows] == ["/w/train.py:31", "transformers/utils/generic.py:940", None]


def test_a_backend_failure_is_not_sent_to_the_backend_compiler_repo() -> None:
    (row,) = why_table(index([{"kind": "graph_break", "seq": 1, "reason": "Backend compiler exception",
                               "explanation": "Backend compiler `npu_backend` failed with X. Adding a graph break.",
                               "dynamo_hint": "Report an issue to the backend compiler repo."}])).iter_rows()
    assert row.hint is not None and "repo" not in row.hint and "TorchAir" in row.hint


def test_the_counts_are_the_rows_counts_without_making_rows() -> None:
    limit = {"kind": "recompile_limit", "seq": 3, "reason": "limit", "file": "m.py", "compile_id": "0/2"}
    events = [recompile(1, 4, 8), {**recompile(2, 8, 16), "compile_id": "0/2"}, limit,
              {"kind": "cache_hit", "seq": 4, "stale": True}]
    t = why_table(index(events))
    shown: dict[str, int] = {}
    for r in t.iter_rows():
        key = "cache_stale" if r.detail.get("stale") else r.kind
        shown[key] = shown.get(key, 0) + 1
    assert t.counts() == shown == {"recompile": 1, "recompile_limit": 1, "cache_stale": 1}

"""TorchAir's and npugraph_ex's messages ``airctl why`` reads: captures, compile-cache and kernel decisions.

:func:`torchair_event` reads one record's message (:mod:`airctl.io.why_log` splits a log into
records, and reads Dynamo's messages itself); :func:`capture_rows` turns npugraph_ex's capture
messages into the ``captures`` rows a recorded run keeps (:mod:`airctl.hooks.npugraph_ex_observers`
uses :func:`shown_key` and :func:`capture_reason` for those, so both say the same). The messages,
as torch-npu 2.13 writes them, are listed in :mod:`airctl.io.why_log`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_CAPTURE = re.compile(r"^No find captured AclGraph\{id: \S+\} of fx_graph (?P<graph>\S+) with graph key "
                      r"\{(?P<key>.*)\}, and start to capture it\.$")
_RECAPTURE = re.compile(r"^The current AclGraph needs to be recaptured for fx_graph (?P<graph>\S+) with graph key "
                        r"\{(?P<key>.*)\}\.$")
_FOUND = re.compile(r"^Find captured AclGraph\{id: \S+\} of fx_graph (?P<graph>\S+) with graph key")
_FALLBACK = re.compile(r"^The (?P<name>capture_limit|static_capture_size_limit) reached when capturing fx_graph "
                       r"(?P<graph>\S+) with graph key (?P<key>.*?), we will fall back.*?"
                       r"(?:capture_limit|static_capture_size_limit)\s+is (?P<limit>-?\d+)")
# reduce-overhead's static kernels (torchair/_acl_concrete_graph/static_kernel.py): a package per kernel set
_KERNEL_HIT = re.compile(r"^Since (?P<pkg>\S+) is already installed, skipping installation\.$")
_KERNEL_MISS = re.compile(r"^(?:Rank \d+: )?(?P<pkg>\S+\.run) install success")
_CACHE_LOAD = re.compile(r"^Loading cache from (?P<path>.+)$")
# fn: a bound method's repr, over several lines when the module's is
_CACHE_COMPILE = re.compile(r"^Compiling cache for (?P<fn>.+?) to (?P<path>\S+)$", re.S | re.M)
CACHE_DROPPED = re.compile(r"UserWarning: Skip cache as (?P<fn>.+?) recompiled, set torch\._logging")
_CACHE_BROKEN = re.compile(r"^Clear broken cache (?P<path>.+?) as (?P<error>.+)$")
RECAPTURE_REASONS = {  # npugraph_ex's counter (recapture_due_to_<x>_<graph>) -> why
    "mutated_input_change": "an input the graph mutates moved to another address",
    "global_limit_core_change": "the stream's core limit changed",
    "force_recapture": "force_recapture is set",
}
_COUNTS = re.compile(r"^For graph (?P<graph>\S+) : the count of captures is (?P<captured>\d+), and count of recaptures "
                     r"caused by mutated inputs changed is (?P<mutated_input_change>\d+), and count of recaptures "
                     r"caused by global limit changed is (?P<global_limit_core_change>\d+), and count of recaptures "
                     r"caused by force_recapture is (?P<force_recapture>\d+)")
CAPTURE_KINDS = ("capture", "recapture_known", "replay", "fallback", "capture_counts")  # npugraph_ex's, -> captures


def shown_key(key: str) -> str:
    """An npugraph_ex graph key as people read it: the shapes and symbol values part (npugraph_ex
    appends a hash of the parameters' addresses when ``frozen_parameter`` is off).

    >>> shown_key("[6]7899115906676961979"), shown_key("no_updated_input")
    ('[6]', 'no_updated_input')
    """
    m = re.match(r"(\[.*\]|no_updated_input)(-?\d*)$", key)
    return m.group(1) if m else key


def cached_function(path: str) -> str:
    """``Class.method`` from a cache file's path (``<dir>/<Class>_<static|dynamic>_..._<md5>/<method>/
    compiled_module``, ``CompiledModel.get_cache_bin``), or the path when it is not one.

    >>> cached_function("/c/Model_static_882f/forward/compiled_module")
    'Model.forward'
    """
    parts = path.strip().replace("\\", "/").split("/")
    if len(parts) >= 3 and parts[-1] == "compiled_module":
        folder = next((p for p in reversed(parts[:-2]) if re.search(r"_(?:static|dynamic)_", p)), None)
        if folder is not None:
            return f"{re.split(r'_(?:static|dynamic)_', folder)[0]}.{parts[-2]}"
    return path.strip()


def capture_reason(key: str, before: list[str]) -> str:
    """Why npugraph_ex captured a graph again for ``key``, given the keys it had captured."""
    shapes = shown_key(key)
    if shapes in {shown_key(k) for k in before}:
        return "a parameter moved to another address (frozen_parameter is off)"
    return f"input shapes changed: {shapes} (captured before: {', '.join(shown_key(k) for k in before)})"


def torchair_event(message: str) -> dict[str, Any] | None:
    """One TorchAir/npugraph_ex log message as an event (captures keep ``captures``' row shape)."""
    if m := _CAPTURE.match(message):
        return {"kind": "capture", "graph_name": m["graph"], "key": m["key"]}
    if m := _RECAPTURE.match(message):
        return {"kind": "recapture_known", "graph_name": m["graph"], "key": m["key"]}
    if m := _FOUND.match(message):
        return {"kind": "replay", "graph_name": m["graph"]}
    if m := _COUNTS.match(message):
        return {"kind": "capture_counts", "graph_name": m["graph"],
                "counts": {k: int(m[k]) for k in RECAPTURE_REASONS}}
    if m := _FALLBACK.match(message):
        return {"kind": "fallback", "graph_name": m["graph"], "key": m["key"], "limit": int(m["limit"]),
                "limit_name": m["name"]}
    if m := _KERNEL_HIT.match(message):
        return {"kind": "static_kernel_hit", "package": m["pkg"],
                "reason": f"static kernel package {Path(m['pkg']).name} already installed: reused"}
    if m := _KERNEL_MISS.match(message):
        return {"kind": "static_kernel_miss", "package": m["pkg"],
                "reason": f"static kernels compiled for new shapes and installed ({m['pkg']})"}
    if m := _CACHE_LOAD.match(message):
        fn = cached_function(m["path"])
        return {"kind": "cache_hit", "cache": m["path"].strip(), "function": fn,
                "reason": f"{fn}: loaded from TorchAir's compile cache"}
    if m := _CACHE_COMPILE.match(message):
        fn = cached_function(m["path"])
        return {"kind": "cache_miss", "cache": m["path"].strip(), "function": fn,
                "reason": f"{fn}: compiled; no cache file for this key (the log does not say which part changed)"}
    if m := CACHE_DROPPED.match(message):
        fn = m["fn"].split("(", 1)[0]  # TorchAir names it by its signature: Model.forward(x)
        return {"kind": "cache_dropped", "function": fn,
                "reason": f"{fn} recompiled: TorchAir removed its cache (a cache holds one compiled graph)"}
    if m := _CACHE_BROKEN.match(message):
        fn = cached_function(m["path"])
        return {"kind": "cache_invalidated", "cache": m["path"].strip(), "function": fn,
                "error": m["error"].strip(), "reason": f"{fn}: cache file broken and removed, compiled again"}
    return None


def capture_rows(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """npugraph_ex's log events -> ``captures`` rows as a run records them (first capture, recaptures
    with their reason, the fallback), each call numbered per graph as npugraph_ex's ``compile`` logs
    one decision per call: a replay, a capture or the fallback (a recapture of a known key logs that
    it needs one, then captures)."""
    rows: list[dict[str, Any]] = []
    keys: dict[str, list[str]] = {}
    calls: dict[str, int] = {}
    counts: dict[str, dict[str, int]] = {}
    pending: dict[str, dict[str, Any]] = {}  # graph -> the known-key recapture announced in this call
    for e in events:
        graph, kind = e.get("graph_name"), e["kind"]
        if graph is None:
            continue
        seen = keys.setdefault(graph, [])
        if kind in ("replay", "fallback") or (kind == "capture" and graph not in pending):
            calls[graph] = calls.get(graph, 0) + 1
        call = calls.get(graph, 1)
        base = {"graph_name": graph, "call": call, "seq": e["seq"]}
        if kind == "recapture_known":
            pending[graph] = {**base, "event": "recapture", "key": shown_key(e["key"])}
        elif kind == "capture" and graph in pending:
            row = pending.pop(graph)
            row["reason"] = "npugraph_ex found the captured graph out of date"
            rows.append(row)
        elif kind == "capture":
            reason = capture_reason(e["key"], seen) if seen else "first call"
            rows.append({**base, "event": "recapture" if seen else "capture", "key": shown_key(e["key"]),
                         "reason": reason})
            seen.append(e["key"])
        elif kind == "capture_counts":
            before = counts.get(graph, {})
            changed = [r for r, n in e["counts"].items() if n > before.get(r, 0)]
            counts[graph] = e["counts"]
            last = next((r for r in reversed(rows) if r["graph_name"] == graph), None)
            if changed and last is not None and last.get("event") == "recapture":
                last["reason"] = RECAPTURE_REASONS[changed[0]]
        elif kind == "fallback":
            rows.append({**base, "event": "fallback", "limit_name": e.get("limit_name", "capture_limit"),
                         "reason": f"{e.get('limit_name', 'capture_limit')} {e['limit']} reached: every later "
                                   "call runs eagerly"})
    return rows

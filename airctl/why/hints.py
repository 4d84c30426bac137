"""What would avoid each ``airctl why`` event: one hint per row, or None where none is known.

A hint is a change the user can make, said with the names they use (``mark_dynamic(x, 0)``,
``--option capture_limit=8``). Dynamo's own hint is kept for graph breaks where it gives one (it
knows its own limits best), with the generic ones left out (:data:`airctl.io.why_log.GENERIC_HINTS`).
A recompile says whether a dynamic-shape choice would have avoided it; a second recompile on the
same input and dimension says the compile turned automatic dynamic shapes off (``dynamic=False``).
docs/why.md explains each hint.
"""

from __future__ import annotations

from typing import Any


def _graph_break(data: dict[str, Any]) -> str | None:
    own = data.get("dynamo_hint")
    if data.get("skipped_frame"):
        return "the whole function runs eagerly: move the untraceable part out of it, or into a helper " \
               "decorated with @torch.compiler.disable"
    if own:
        return str(own)
    return "move the untraceable call out of forward, or into a helper decorated with @torch.compiler.disable"


def _recompile(data: dict[str, Any], seen: list[dict[str, Any]]) -> str | None:
    guard, name, dim = data.get("guard"), data.get("input"), data.get("dim")
    if guard == "shape" and name is not None:
        again = any(e.get("kind") == "recompile" and e.get("guard") == "shape" and e.get("input") == name
                    and e.get("dim") == dim and e.get("file") == data.get("file") for e in seen)
        base = (f"a dynamic shape avoids it: torch._dynamo.mark_dynamic({name}, {dim}) before the first call, "
                "or torch.compile(dynamic=True)")
        if again:
            return base + "; it recompiled for this size before, so automatic dynamic shapes are off " \
                          "(dynamic=False): dynamic=None (the default) would make it dynamic after one recompile"
        return base
    if guard in ("dtype", "device", "requires_grad", "dispatch_key_set"):
        return f"no dynamic-shape choice covers a change of {guard}: give {name} one {guard} on every call " \
               "(or expect one graph per value)"
    return "a guard on a Python value or module attribute failed: keep it constant between calls, or pass it " \
           "as a tensor"


def _recapture(data: dict[str, Any]) -> str | None:
    reason = str(data.get("reason", ""))
    if reason.startswith("input shapes changed"):
        return "each new input shape is one more aclgraph capture: pad inputs to a few fixed sizes (buckets)"
    if "parameter moved" in reason:
        return "set frozen_parameter=True (npugraph_ex option) when the parameters keep their addresses"
    if "mutated moved" in reason or "mutates moved" in reason:
        return "keep the input the graph mutates in one buffer between calls"
    if "core limit" in reason:
        return "set the stream's core limit once, before the first call"
    if "force_recapture" in reason:
        return "unset force_recapture"
    return None


def _cache(kind: str, data: dict[str, Any]) -> str | None:
    cache = data.get("cache")
    if kind == "cache_hit":
        if data.get("stale"):
            return (f"delete {cache} (or use another cache_dir): TorchAir's key for a method holds the module's "
                    "repr and options, not the method's code")
        return None
    if kind == "cache_dropped":
        return "cache_compile keeps one graph per method: make its inputs' shapes and Python values fixed (see the " \
               "recompiles above), or compile it with dynamic=True"
    if kind == "cache_invalidated":
        return "TorchAir removed the broken file and compiled again; nothing to do unless it repeats"
    changed = data.get("changed") or []
    if "options" in changed:
        return "expected after changing compile options; keep them fixed between runs to reuse the cache"
    if "module" in changed:
        return "expected after changing the module (its layers or sizes); the old cache folder stays on disk"
    if changed:
        return "expected after changing " + ", ".join(changed)
    return None


def hint_for(kind: str, data: dict[str, Any], seen: list[dict[str, Any]]) -> str | None:
    """The hint of one event, given the events before it."""
    if kind == "graph_break":
        return _graph_break(data)
    if kind == "recompile":
        return _recompile(data, seen)
    if kind == "recompile_limit":
        return "remove the cause of the recompiles before it (see their hints), or raise " \
               f"torch._dynamo.config.{data.get('limit', 'recompile_limit')}"
    if kind == "recapture":
        return _recapture(data)
    if kind == "fallback":
        if data.get("limit_name") == "static_capture_size_limit":  # reduce-overhead's own option
            return "every later call runs eagerly: raise debug.aclgraph.static_capture_size_limit or use fewer " \
                   "input shapes"
        return "every later call runs eagerly: raise capture_limit (--option capture_limit=N) or use fewer " \
               "input shapes"
    if kind == "static_kernel_miss":
        return "expected once per new set of shapes; fixed shapes (buckets) keep the installed kernels in use"
    if kind.startswith("cache_"):
        return _cache(kind, data)
    return None

"""What would avoid each ``airctl why`` event: one hint per row, or None where none is known.

A hint is a change the user can make, said with the names they use (``mark_dynamic(x, 0)``,
``--option capture_limit=8``). Dynamo's own hint is kept for graph breaks where it gives one (it
knows its own limits best), with the generic ones left out (:data:`airctl.io.why_log.GENERIC_HINTS`).
A recompile says whether a dynamic-shape choice would have avoided it; a second recompile on the
same input and dimension says the compile turned automatic dynamic shapes off (``dynamic=False``).
docs/why.md explains each hint.
"""

from __future__ import annotations

import re
from typing import Any

# how Dynamo names an input it guards: ``x``, ``kwargs['input_ids']`` (a decorator's ``**kwargs``: how
# transformers' models are called), ``args[0]``; the tensor the user passes is the last key or the name
_KEYWORD = re.compile(r"^kwargs\['(?P<name>\w+)'\]$")


def tensor_name(source: str) -> str:
    """The name of the tensor the user passes for a guarded input, as Python: ``input_ids`` for
    ``kwargs['input_ids']`` (passed as ``input_ids=...``), the source itself otherwise.

    >>> tensor_name("kwargs['input_ids']"), tensor_name("x")
    ('input_ids', 'x')
    """
    keyword = _KEYWORD.match(source)
    return keyword["name"] if keyword else source


def recompile_key(data: dict[str, Any]) -> tuple[Any, ...] | None:
    """What makes two recompiles "the same input and dimension" (None: not a shape recompile)."""
    if data.get("kind") != "recompile" or data.get("guard") != "shape" or data.get("input") is None:
        return None
    return data.get("input"), data.get("dim"), data.get("file")


def _graph_break(data: dict[str, Any]) -> str | None:
    own = data.get("dynamo_hint")
    if data.get("skipped_frame"):
        return "the whole function runs eagerly: move the untraceable part out of it, or into a helper " \
               "decorated with @torch.compiler.disable"
    if "backend compiler" in f"{data.get('reason')} {data.get('explanation')}".lower():
        return "TorchAir's compiler failed on this graph, so Dynamo runs this part eagerly: its error is the " \
               "row's detail.explanation (airctl why --json); `airctl coverage` lists the ops TorchAir cannot convert"
    if own:
        return str(own)
    return "move the untraceable call out of forward, or into a helper decorated with @torch.compiler.disable"


DETERMINISTIC_GUARD = "torch_npu.npu._get_deterministic_level()"


def _recompile(data: dict[str, Any], seen: set[tuple[Any, ...]]) -> str | None:
    guard, name, dim = data.get("guard"), data.get("input"), data.get("dim")
    if DETERMINISTIC_GUARD in str(data.get("reason", "")):  # TorchAir's guard (torch_npu/dynamo/_deterministic_guard)
        return ("the NPU deterministic level changed between calls (torch_npu.npu.set_deterministic_level): "
                "each level is its own graph, and its own compile-cache key; set it once before the first call")
    if guard == "shape" and name is not None:
        again = recompile_key(data) in seen
        tensor = tensor_name(str(name))
        passed = f" (the tensor passed as {tensor}=)" if tensor != name else ""
        base = (f"a dynamic shape avoids it: torch._dynamo.mark_dynamic({tensor}, {dim}){passed} before the first "
                "call, or torch.compile(dynamic=True)")
        if again:
            return base + "; it recompiled for this size before, so automatic dynamic shapes are off " \
                          "(dynamic=False): dynamic=None (the default) would make it dynamic after one recompile"
        return base
    if guard in ("dtype", "device", "requires_grad", "dispatch_key_set"):
        return f"no dynamic-shape choice covers a change of {guard}: give {tensor_name(str(name))} one {guard} " \
               "on every call " \
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


def hint_for(kind: str, data: dict[str, Any], seen: set[tuple[Any, ...]]) -> str | None:
    """The hint of one event, given the :func:`recompile_key` of the recompiles before it."""
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

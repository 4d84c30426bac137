"""npugraph_ex's observer points (both backends): its passes, its final FX graph, its captures.

npugraph_ex is TorchAir's aclgraph compiler copied into a package of its own, so it has its own
copies of the classes airctl listens to (:mod:`.capture`). For the length of a capture:

- its ``GraphTransformObserver`` hands every FX pass (``post_grad_custom_pre_pass``,
  ``optimize_noop_ops``, ``recover_view_inplace_pattern``, ``apply_pattern_passes``,
  ``view_to_reshape``, ``post_grad_custom_post_pass``) and every aclgraph pass it announces by a
  dump to the listener, as TorchAir's does (:mod:`.graph_transform_observer`);
- ``AclConcreteGraph.save_fx_graph`` gives the final FX graph (``fx-final``) and the concrete
  graph whose generated code the ledger keeps;
- ``AclGraph.__call__`` is watched from outside: npugraph_ex's own bookkeeping (its graph keys,
  its ``captured_*``/``recapture_due_to_*`` counters, its fallback flag) is compared before and after
  each call, and each capture, recapture and fallback to eager is handed to the listener with its
  reason (``aclgraph_capture``). On an NPU that is the real capture; under sim, the bookkeeping
  of :mod:`airctl.sim.patched_npugraph_ex_acl_graph`.

Nothing is patched when npugraph_ex is not loaded.
"""

from __future__ import annotations

import importlib
import os
import sys
import sysconfig
import weakref
from collections.abc import Sequence
from typing import Any

from airctl.hooks import graph_transform_observer
from airctl.hooks.concrete_graph import patch_save_fx_graph
from airctl.hooks.patching import Patches
from airctl.io.paths import AIRCTL_PACKAGE
from airctl.io.torchair_why import RECAPTURE_REASONS, capture_reason, shown_key


def _modules() -> tuple[Any, Any, Any] | None:
    if "npugraph_ex" not in sys.modules:
        return None
    try:
        gto = importlib.import_module("npugraph_ex._utils.graph_transform_observer")
        fx2acl = importlib.import_module("npugraph_ex._acl_concrete_graph.fx2acl_converter")
        acl = importlib.import_module("npugraph_ex._acl_concrete_graph.acl_graph")
    except ImportError:  # a lazy proxy not loaded yet (an NPU host before first use)
        return None
    return gto, fx2acl, acl


def _counts(counters: Any, name: str) -> dict[str, int]:
    table = counters["npugraph_ex"]
    return {reason: int(table.get(f"recapture_due_to_{reason}_{name}", 0)) for reason in RECAPTURE_REASONS}


def describe(before: dict[str, Any], after: dict[str, Any], call: int, limit: Any) -> list[dict[str, Any]]:
    """The capture events of one call from npugraph_ex's state before and after it.

    >>> describe({"keys": ["[4]"], "counts": {}, "fallback": False},
    ...          {"keys": ["[4]", "[6]"], "counts": {}, "fallback": False}, 2, 64)[0]["reason"]
    'input shapes changed: [6] (captured before: [4])'
    """
    events: list[dict[str, Any]] = []
    if after["fallback"] and not before["fallback"]:
        return [{"event": "fallback", "call": call,
                 "reason": f"capture_limit {limit} reached: every later call runs eagerly"}]
    new = [k for k in after["keys"] if k not in before["keys"]]
    for key in new:
        reason = capture_reason(key, before["keys"]) if before["keys"] else "first call"
        events.append({"event": "capture" if not before["keys"] else "recapture", "call": call,
                       "key": shown_key(key), "reason": reason})
    for what, text in RECAPTURE_REASONS.items():
        for _ in range(after["counts"].get(what, 0) - before["counts"].get(what, 0)):
            events.append({"event": "recapture", "call": call, "reason": text})
    return events


def stale_replay(graph: Any, args: Sequence[Any]) -> dict[str, Any] | None:
    """With ``unsafe_skip_npugraph_capture_validation``, a call whose graph key was captured but whose
    mutated inputs moved since: npugraph_ex's own check (``is_need_to_recapture``) would recapture;
    skipped, the replay reads the captured addresses (rule ``stale_replay``, R21). None otherwise."""
    config = getattr(graph, "config", None) or {}
    key_of, metas = getattr(graph, "_unupdated_input_func", None), getattr(graph, "_graphs_meta", None)
    if not config.get("unsafe_skip_npugraph_capture_validation", False) or key_of is None or not metas:
        return None
    try:
        key = key_of(*args)
    except Exception:  # a debugging aid never breaks the user's call (style.md §9)
        return None
    captured = getattr(metas.get(key), "captured_mutated_inputs", None) or {}
    moved = sorted(i for i, ptr in captured.items()
                   if i < len(args) and hasattr(args[i], "data_ptr") and args[i].data_ptr() != ptr)
    if not moved:
        return None
    return {"event": "stale_replay", "key": shown_key(key), "inputs": moved,
            "reason": f"mutated input(s) {', '.join(map(str, moved))} moved since the capture: the recapture "
                      "check (skipped by unsafe_skip_npugraph_capture_validation) would have recaptured here"}


# the environment's console scripts (``.venv/bin/airctl``): airctl's entry point, not the user's code
_SCRIPTS = tuple(os.path.join(os.path.realpath(p), "bin") + os.sep for p in {sys.prefix, sys.exec_prefix})
# Python's own library (logging hands Dynamo's messages to airctl's handler through it)
_STDLIB = tuple({os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")})


def user_call() -> dict[str, Any]:
    """The innermost frame outside torch, torch_npu, npugraph_ex, airctl, site-packages, Python's library
    and the code Dynamo compiled: the line of the user's code whose call captured or fell back (``{}``: none)."""
    from torch._dynamo.utils import orig_code_map  # code Dynamo made of the user's: not where they called

    frame = sys._getframe(1)
    while frame is not None:
        file = frame.f_code.co_filename
        real = os.path.realpath(file)
        if not (file.startswith("<") or "site-packages" in file or "dist-packages" in file
                or real.startswith(AIRCTL_PACKAGE) or real.startswith(_SCRIPTS) or real.startswith(_STDLIB)
                or frame.f_code in orig_code_map):
            return {"file": file, "line": frame.f_lineno}
        frame = frame.f_back
    return {}


def patch(p: Patches, listener: Any) -> None:
    modules = _modules()
    if modules is None:
        return
    gto, fx2acl, acl = modules
    from torch._dynamo.utils import counters

    graph_transform_observer.patch(p, listener, gto=gto)
    patch_save_fx_graph(p, fx2acl.AclConcreteGraph, listener)
    calls: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    original_call = acl.AclGraph.__call__

    def state(graph: Any) -> dict[str, Any]:
        return {"keys": list(getattr(graph, "_graphs_meta", {}) or {}), "fallback": bool(graph.fallback_to_eager),
                "counts": _counts(counters, str(graph.name))}

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        before = state(self)
        calls[self] = calls.get(self, 0) + 1
        stale = stale_replay(self, args)
        try:
            return original_call(self, *args, **kwargs)
        finally:
            events = describe(before, state(self), calls[self], self.config.get("capture_limit"))
            events += [{**stale, "call": calls[self]}] if stale and not events else []
            where = user_call() if events else {}
            for event in events:
                listener.aclgraph_capture(str(self.name), {**event, **where})

    p.setattr(acl.AclGraph, "__call__", call)

"""Watch TorchAir's ``cache_compile`` decide between its compile cache and a fresh compile (both backends).

``torchair.inference.cache_compile(model.forward, ...)`` returns a ``LazyCompiledModel``; its first
call (``LazyCompiledModel.compile``) names a cache file from a key and loads it when it exists, or
compiles and saves one. TorchAir logs the decision at INFO only, and never says what the key was
made of. The key (``CompiledModel.get_cache_bin``, torch-npu 2.13) is an md5 of three parts —
for a method, ``str(module)`` (the module's repr: its layers and sizes, **not** its code); the
compile options (``_get_str_options``: every config option, and a digest of custom pass code);
the NPU deterministic level — placed in a folder named by the class, ``static``/``dynamic``,
``aclgraphcache`` (reduce-overhead, npugraph_ex) or ``gecache``, and the ranks.

This wrapper runs TorchAir's own ``compile`` unchanged and reports, per call, to the listener's
``cache_event``: ``cache_hit`` / ``cache_miss`` / ``cache_invalidated`` (a cache file TorchAir
found broken and removed), the cache file, each key part as TorchAir computes it (through its own
functions), and a digest of the method's source, which the key leaves out — so a later run can say
which part changed, and that a hit loaded code older than the script's. ``cache_dropped``: the
cached method recompiled, and TorchAir removed the cache it had saved
(``ModelCacheSaver.save_compiled_fn``).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import sys
from typing import Any

from airctl.hooks.patching import Patches

MODULE = "torchair.inference._cache_compiler"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


def key_parts(cc: Any, lazy: Any) -> dict[str, Any]:
    """The parts of a ``LazyCompiledModel``'s cache key, named, from TorchAir's own functions."""
    func, config = lazy.func, lazy.config
    owner = getattr(func, "__self__", None)
    options = cc._get_str_options(config)
    torch_npu = sys.modules.get("torch_npu")
    try:
        deterministic = 0 if torch_npu is None else int(torch_npu.npu._get_deterministic_level())
    except Exception:  # noqa: BLE001 - the stand-in or an old torch_npu without it
        deterministic = 0
    return {"module": _digest(str(owner)) if owner is not None else _digest(inspect.getsource(func)),
            "options": options, "deterministic": deterministic,
            "dynamic": bool(lazy.dynamic), "mode": str(getattr(config.mode, "value", config.mode))}


def _code(func: Any) -> str | None:
    try:
        return _digest(inspect.getsource(func))
    except (OSError, TypeError):
        return None


def _function(func: Any) -> dict[str, Any]:
    """The cached method as its events name it: ``function`` (its qualified name), ``file`` and ``line`` where known."""
    named = {"function": getattr(func, "__qualname__", str(func))}
    try:
        return {**named, "file": inspect.getsourcefile(func), "line": inspect.getsourcelines(func)[1]}
    except (OSError, TypeError):
        return named


def patch(p: Patches, listener: Any) -> None:
    if MODULE not in sys.modules or not hasattr(listener, "cache_event"):
        return
    cc = importlib.import_module(MODULE)
    original = cc.LazyCompiledModel.compile

    def compile(self: Any, global_vars: Any = None) -> Any:
        try:
            cache_bin = cc.CompiledModel.get_cache_bin(
                self.func, config=self.config, dynamic=self.dynamic, cache_dir=self.cache_dir,
                global_rank=self.global_rank, tp_rank=self.tp_rank, pp_rank=self.pp_rank, ge_cache=self.ge_cache)
            parts, existed = key_parts(cc, self), os.path.exists(cache_bin)
        except Exception:  # noqa: BLE001 - observing must never stop TorchAir's own compile
            return original(self, global_vars)
        result = original(self, global_vars)
        loaded = not isinstance(result, cc.ModelCacheSaver)
        kind = "cache_hit" if loaded else ("cache_invalidated" if existed else "cache_miss")
        listener.cache_event({"kind": kind, "cache": cache_bin, **_function(self.func), "key": parts,
                              "code": _code(self.func)})
        return result

    original_save = cc.ModelCacheSaver.save_compiled_fn

    def save_compiled_fn(self: Any, code_id: Any) -> Any:
        dropped = self._code_id is not None and self._code_id != code_id  # TorchAir removes the cache
        result = original_save(self, code_id)
        if dropped:
            listener.cache_event({"kind": "cache_dropped", "cache": self.cache_bin, **_function(self.func)})
        return result

    p.setattr(cc.LazyCompiledModel, "compile", compile)
    p.setattr(cc.ModelCacheSaver, "save_compiled_fn", save_compiled_fn)

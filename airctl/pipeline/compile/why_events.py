"""Record, while a compile or a script runs, why it compiled more than once: ``index.json`` ``events``.

Dynamo says why it broke a graph or recompiled a function only to its ``graph_breaks`` and
``recompiles`` loggers (``TORCH_LOGS=graph_breaks,recompiles``), which are off by default, and says
that it gave up on a function (``recompile_limit``) as a warning. :func:`recording_why` switches
the two loggers on for the length of the run with a handler of its own and nothing else (no text
reaches the terminal that would not have reached it without airctl), reads each message with
:func:`airctl.io.why_log.dynamo_event` — the reader ``airctl import`` uses on the same text from an
NPU machine's log — and adds the event to the ledger, with the Dynamo graph it led to. A recompile
also keeps the user's line that made the call with the new input (``call_file``, ``call_line``: the
innermost frame outside torch, libraries and airctl), which ``airctl why`` shows rather than the
recompiled function's ``def`` line.

TorchAir's ``cache_compile`` decisions arrive through the capture listener's ``cache_event``
(:mod:`airctl.hooks.lazy_compiled_model`); :func:`cache_event` compares the key parts with
the same function's last event in earlier runs of the same ``--out`` folder, to say which part of
the key changed on a miss, and whether a hit loaded code saved from a different source.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from airctl.hooks.npugraph_ex_observers import user_call
from airctl.io.why_log import dynamo_event
from airctl.ledger.writer import LedgerWriter

ARTIFACTS = ("graph_breaks", "recompiles")
WARNINGS = "torch._dynamo.convert_frame"  # the recompile-limit warning's logger


class _Listener(logging.Handler):
    """Dynamo's messages -> ledger events (never raises into Dynamo)."""

    def __init__(self, session: Any) -> None:
        super().__init__(logging.DEBUG)
        self.session = session

    def emit(self, record: logging.LogRecord) -> None:
        try:
            import torch

            artifact = getattr(logging.getLogger(record.name), "artifact_name", None)
            trace = torch._guards.CompileContext.current_trace_id()
            event = dynamo_event(artifact, record.getMessage(), str(trace) if trace is not None else None)
            if event is None:
                return
            if event["kind"] != "recompile_limit":  # a recompile limit compiles nothing more
                event["dynamo_graph"] = self.session.dynamo_count + 1
            if event["kind"] in ("recompile", "recompile_limit"):  # the user's call with the new input
                call = user_call()
                if call:
                    event["call_file"], event["call_line"] = call["file"], call["line"]
            self.session.ledger.add_event(event)
        except Exception:  # noqa: BLE001 - a debugging aid never breaks the user's compile
            pass


def _artifact_loggers() -> list[logging.Logger]:
    from torch._logging._internal import log_registry

    return [logging.getLogger(q) for q in sorted(log_registry.artifact_log_qnames)
            if q.rsplit(".__", 1)[-1] in ARTIFACTS]


@contextlib.contextmanager
def recording_why(session: Any) -> Iterator[None]:
    """Dynamo's graph breaks, recompiles and recompile-limit fallbacks go to ``session.ledger`` as
    events while the block runs; the loggers' state is restored after. Dynamo starts from its
    fresh-process state (``torch._dynamo.reset()``), so a second run in one process (a test, a
    bisect step) hears what a fresh ``python script.py`` would."""
    import torch._dynamo  # noqa: F401 - registers the artifact loggers
    from torch._dynamo.utils import graph_break_dup_warning_checker
    from torch._logging._internal import log_state

    torch._dynamo.reset()  # a run starts as a fresh process does: frame ids from 0/0, no automatic-dynamic memory
    graph_break_dup_warning_checker.reset()  # ... and each graph break told in full

    handler = _Listener(session)
    enabled = set(log_state.artifact_names)
    loggers = _artifact_loggers()
    saved = [(lg, lg.level, lg.propagate) for lg in loggers]
    for name in ARTIFACTS:
        log_state.enable_artifact(name)
    for lg in loggers:
        if lg.artifact_name not in enabled:  # type: ignore[attr-defined]
            lg.propagate = False  # the user did not ask for it: only airctl hears it
        lg.setLevel(logging.DEBUG)
        lg.addHandler(handler)
    warn = logging.getLogger(WARNINGS)
    warn.addHandler(handler)
    try:
        yield
    finally:
        warn.removeHandler(handler)
        for lg, level, propagate in saved:
            lg.removeHandler(handler)
            lg.setLevel(level)
            lg.propagate = propagate
        log_state.artifact_names.clear()
        log_state.artifact_names.update(enabled)


def link_graphs(ledger: LedgerWriter) -> None:
    """Each event's ``graph``: the first ledger graph of the Dynamo graph it led to, when it exists."""
    index = ledger.run_index
    if not index.events:
        return
    first: dict[int, str] = {}
    for g in index.graphs:
        if g.dynamo_graph is not None:
            first.setdefault(g.dynamo_graph, g.id)
    for event in index.events:
        if event.dynamo_graph is not None and event.graph is None:
            gid = first.get(event.dynamo_graph)
            if gid is not None:
                event.graph = gid
            else:
                event.dynamo_graph = None  # the Dynamo graph it pointed at was never compiled
    ledger.flush(force=False)


# -- TorchAir's compile cache ------------------------------------------------------------------
def _earlier_events(out_dir: Path, this: Path) -> Iterator[dict[str, Any]]:
    """Cache events of earlier runs in ``out_dir``, newest run first (each ``index.json`` read once, as
    JSON by the ledger's one loader, untyped: only its ``events`` are looked at)."""
    from airctl.errors import LedgerError
    from airctl.ledger.index_load import load_index
    from airctl.ledger.runs import run_folders
    from airctl.ledger_files import INDEX

    for folder in sorted(run_folders(out_dir), key=lambda p: p.name, reverse=True):
        if folder.resolve() == this.resolve():
            continue
        try:
            events = load_index(folder / INDEX).get("events") or []
        except (LedgerError, AttributeError):  # an unreadable or foreign ledger says nothing
            continue
        for event in reversed(events):
            if isinstance(event, dict) and str(event.get("kind", "")).startswith("cache_"):
                yield {**event, "run": folder.name}


def _last_of(out_dir: Path, this: Path, event: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The same method's last cache event in earlier runs, and the last that wrote this cache file."""
    earlier = saved = None
    for e in _earlier_events(out_dir, this):
        if earlier is None and e.get("function") == event.get("function") and e.get("file") == event.get("file"):
            earlier = e
        if saved is None and e.get("cache") == event.get("cache") and e.get("kind") in ("cache_miss",
                                                                                      "cache_invalidated"):
            saved = e
        if earlier is not None and saved is not None:
            break
    return earlier, saved


def _changed(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return [part for part in ("module", "options", "deterministic", "dynamic", "mode")
            if old.get(part) != new.get(part)]


def _option_changes(old: str, new: str) -> list[str]:
    a = dict(p.split("=", 1) for p in old.split(",") if "=" in p)
    b = dict(p.split("=", 1) for p in new.split(",") if "=" in p)
    return [f"{k}: {a.get(k, '(unset)')} -> {b.get(k, '(unset)')}" for k in sorted({*a, *b}) if a.get(k) != b.get(k)]


def cache_event(ledger: LedgerWriter, event: dict[str, Any]) -> None:
    """One ``cache_compile`` decision, compared with the same function's last event in earlier runs."""
    key = event.get("key") or {}
    earlier, saved = _last_of(ledger.root.parent, ledger.root, event)
    name = event.get("function", "the function")
    if event["kind"] == "cache_dropped":
        event["reason"] = f"{name} recompiled: TorchAir removed its cache (a cache holds one compiled graph)"
        ledger.add_event(event)
        return
    if event["kind"] == "cache_hit":
        event["reason"] = f"{name}: loaded from TorchAir's compile cache"
        if saved is not None and saved.get("code") and event.get("code") and saved["code"] != event["code"]:
            event["stale"] = True
            event["saved_by"] = saved["run"]
            event["reason"] = (f"{name}: loaded a cache saved from different code (run {saved['run']}); "
                               "the edit is not compiled")
    else:
        changed = _changed(earlier.get("key") or {}, key) if earlier is not None else []
        if earlier is not None:
            event["previous"] = earlier["run"]
        event["changed"] = changed
        words = {"module": "the module's structure (its repr)", "options": "compile options",
                 "deterministic": "the deterministic level", "dynamic": "dynamic", "mode": "the mode"}
        if changed:
            why = "key changed: " + ", ".join(words[c] for c in changed)
            if "options" in changed:
                event["option_changes"] = _option_changes(str(earlier["key"].get("options", "")),
                                                          str(key.get("options", "")))
                why += " (" + "; ".join(event["option_changes"][:3]) + ")"
        elif earlier is not None and earlier.get("code") != event.get("code"):
            why = "no cache file for this key (the code changed, but the key does not hold it)"
        else:
            why = "no cache file for this key yet"
        verb = "cache file broken and removed, compiled again" if event["kind"] == "cache_invalidated" else "compiled"
        event["reason"] = f"{name}: {verb}; {why}"
    ledger.add_event(event)

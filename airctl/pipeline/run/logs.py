"""Route TorchAir's and airctl's logs into the ledger's ``log.txt`` for the duration of a run.

TorchAir logs to stdout through the ``torchair`` logger (reference/torchair.md §7). During a
run airctl lowers that logger to DEBUG so ``log.txt`` gets the pass-diff tables and
"Add record-wait generated control edges" lines, while TorchAir's own stdout handler keeps the
level the user had — the terminal is not flooded, nothing the user asked for is hidden.

TorchAir's converter also traces every FX node it converts at DEBUG (target, each input, the
output: five lines a node, half of a large model's log, and their formatting costs the compile
a few percent), and says once per node that the op's converter "already exists". ``log.txt``
leaves these per-node lines out unless asked (``keep_node_trace``, which ``--capture full``
sets); the ledger has the graphs themselves. Left out, they are not even made: for the run, the
``torchair`` logger's ``debug`` returns at once when called from the trace wrapper or the
converter lookup (recognised by their code objects), and logs every other line as before, under
its own file and line. Building a log record per such line and then dropping it cost a 6k-node
compile about 3% (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType
from typing import Any

from airctl.ledger.log_file import LedgerLogHandler
from airctl.torch_env import torchair_attr

FORMAT = "%(asctime)s %(levelname)s %(name)s [%(filename)s:%(lineno)d] %(message)s"


def is_node_trace(record: logging.LogRecord) -> bool:
    """A line of TorchAir's per-node conversion trace (``_trace_print`` in its npu_fx_compiler)."""
    return record.funcName == "inner" and record.filename == "npu_fx_compiler.py"


@contextlib.contextmanager
def capture_logs(path: Path, level: int = logging.DEBUG, keep_node_trace: bool = True) -> Iterator[None]:
    handler = LedgerLogHandler(path)  # a full disk stops the log quietly (airctl.ledger.log_file)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(level)
    if not keep_node_trace:
        handler.addFilter(lambda record: not is_node_trace(record))
    # Only loggers that exist already: creating "torchair" before TorchAir is imported would give
    # it a plain Logger instead of TorchAir's own class (which has .event()).
    names = [n for n in ("torchair", "airctl") if n == "airctl" or n in logging.root.manager.loggerDict]
    loggers = [logging.getLogger(n) for n in names]
    saved = []
    for lg in loggers:
        previous = lg.level
        effective = lg.getEffectiveLevel()
        handler_levels = [(h, h.level) for h in lg.handlers]
        for h, h_level in handler_levels:
            h.setLevel(max(h_level, effective))
        saved.append((lg, previous, handler_levels))
        lg.addHandler(handler)
        lg.setLevel(min(effective, level))
    undo = [_skip_node_trace(lg) for lg in loggers if lg.name == "torchair" and not keep_node_trace]
    try:
        yield
    finally:
        for restore in undo:
            restore()
        for lg, previous, handler_levels in saved:
            lg.removeHandler(handler)
            lg.setLevel(previous)
            for h, h_level in handler_levels:
                h.setLevel(h_level)
        handler.close()


def _per_node_codes() -> frozenset[CodeType]:
    """The code objects of TorchAir's per-node DEBUG lines: its conversion trace wrapper (one for
    every method it decorates) and its converter lookup; those this TorchAir lacks are left out."""
    codes: set[CodeType] = set()
    trace = torchair_attr("npu_fx_compiler", "_trace_print")
    if callable(trace):
        try:
            codes.add(trace(lambda *_args: None).__code__)
        except Exception:  # noqa: BLE001 - another TorchAir's decorator: keep the filter only
            pass
    lookup = torchair_attr("_ge_concrete_graph.fx2ge_converter", "get_or_auto_gen_converter")
    if callable(lookup) and hasattr(lookup, "__code__"):
        codes.add(lookup.__code__)
    return frozenset(codes)


def _skip_node_trace(lg: logging.Logger) -> Callable[[], None]:
    """Make ``lg.debug`` return at once when TorchAir's per-node lines call it; returns the undo."""
    codes = _per_node_codes()
    if not codes or "debug" in vars(lg):
        return lambda: None

    def debug(msg: object, *args: Any, **kwargs: Any) -> None:
        if sys._getframe(1).f_code in codes:
            return
        if lg.isEnabledFor(logging.DEBUG):  # as Logger.debug, with the caller's file:line, not this one's
            kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 1
            lg._log(logging.DEBUG, msg, args, **kwargs)

    lg.debug = debug  # type: ignore[method-assign]
    return lambda: vars(lg).pop("debug", None)

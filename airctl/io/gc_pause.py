"""Pause Python's cyclic garbage collector around bulk graph work (reading, encoding, matching).

Reading or matching a 50k-node graph allocates millions of small lists, dicts and tuples; each
full collection then rescans every live object, which doubled those runs. During a compile it
is worse: a capture reads and writes graphs of 10k nodes in the middle of TorchAir's compile, whose
heap holds about a million objects. Every 700 container objects airctl allocates count toward a
young collection, every tenth of those toward an older one, and every tenth of *those* may
trigger a full collection, which walks the whole heap: about a second each at that size.
Measured on a 52-layer compile, airctl's reads and snapshot encodings set off 3 of the 7 full
collections of the run, nearly 5 s, more than all of its other capture work (docs/performance.md).

Graph reads and encodings make no reference cycles (reference counting frees what they drop),
so nothing is gained by collecting while they run. Inside :func:`gc_paused` the collector is
off; when the outermost pause ends it is on again, and its next young collection takes
everything allocated meanwhile in one pass instead of hundreds. Pauses nest and may overlap
across threads (the ledger's background writer pauses too): the collector comes back when the
last one ends, and only if it was on when the first began (a user's own ``gc.disable()`` stays).

TorchAir's own work is not changed by this: its allocations during a pause are collected by
the same next collection.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

_lock = threading.Lock()
_depth = 0
_resume = False  # whether the outermost pause found the collector on

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block (see the module docstring for why and when)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()


def without_gc(fn: F) -> F:
    """``fn`` run inside :func:`gc_paused`."""

    @functools.wraps(fn)
    def paused(*args: Any, **kwargs: Any) -> Any:
        with gc_paused():
            return fn(*args, **kwargs)

    return paused  # type: ignore[return-value]

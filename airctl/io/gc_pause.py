"""Pause Python's cyclic garbage collector around bulk graph work (reading, matching).

Reading or matching a 50k-node graph allocates millions of small lists, dicts and tuples; each
full collection then rescans every live node of both graphs, which doubles the run time. None
of this code creates reference cycles, so collection can wait until the work is done.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()

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

A compile (``compile_model``: every command that compiles, each step of ``bisect``) runs inside
one pause, from its ledger's opening to its report. Dynamo, AOT and TorchAir allocate millions of
objects and keep tens of thousands alive; with the collector on, a 32-layer ``passes apply``
spent 1.7 s of an incremental run and 3.2 to 4.1 s of a full one in about 460 and 1,700
collections (in a warm process, whose frozen heap none of them walks), and 0.2 s and 0.8 s inside
one pause. What a compile leaves as cyclic garbage (Dynamo's frames, replaced graph modules) waits
for the end of its pause: the peak memory of that run rose 2 to 3 % (659 -> 670 MB, 669 -> 692 MB),
and a command that compiles many times frees each compile's garbage before the next one starts.

A command that only reads graph files and works on them (``airctl check FILE``, ``airctl diff A B``
of two files: :func:`graph_files_only`) pauses for its whole run. Each pause's end is otherwise
followed by a young collection that walks everything the pause allocated, the whole graph just
read, and later older collections walk it again: 0.4 s of the 3.5 s of CPU of ``airctl check`` on
a 200k-node graph file, 0.15 s of ``airctl diff`` of two 50k-node files. Such a pause ends
*settled* (``settle=True``): what is then in the young generations moves to the oldest one unwalked
(``gc.freeze()`` then ``gc.unfreeze()``, two list splices), so printing the result afterwards does
not set off that walk either; a full collection, if one ever comes, still frees any cycle among them.
(Not in a process that froze its heap, as the warm process and the test workers do: unfreezing
would hand their heap back to the collector.)

A process that ends with its command (the console script, cold or forked by the warm process:
:func:`process_ends_with_command`) does not pay for that young collection after its last compile.
The compile's pause ends *held* (``hold=True``): the collector stays off while the command prints
its result and writes its report, and the process ends without it ever walking the compile's
objects. Measured on the 32-layer ``passes apply``, that walk and the two collections it set off
took about 1.3 s after the compile, in the command's own time. A later compile of the same command
(``bisect``'s steps, ``suggest``'s checks) begins its held pause with the young collection owed, so
each compile's garbage is still freed before the next one allocates. Work with no compile after
it runs held until the process ends: only what it makes into reference cycles waits, as after a
pause.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

_lock = threading.Lock()
_depth = 0
_resume = False  # whether the outermost pause found the collector on
_settle = False  # whether the outermost pause ends settled
_hold = False  # whether the outermost pause ends held (hold=True, in a process that ends with its command)
_ends_with_command = False  # process_ends_with_command() was called
_held = False  # a pause ended held: the collector is off, and a young collection is owed

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def gc_paused(pause: bool = True, settle: bool = False, hold: bool = False) -> Iterator[None]:
    """No cyclic collection inside the block (see the module docstring for why and when); ``pause``
    False: the block runs as it is. ``settle``: the outermost pause ends with the young generations
    moved to the oldest, unwalked (a command's whole run: the module docstring). ``hold`` (a compile):
    in a process that ends with its command, the outermost pause ends with the collector still off,
    and the next such pause begins with the young collection that one skipped."""
    global _depth, _resume, _settle, _hold, _held
    if not pause:
        yield
        return
    owed = False
    with _lock:
        if _depth == 0:
            if _held and hold:  # the next compile: first the young collection the last one's pause owes
                _held, owed = False, True
            elif not _held:
                _resume = gc.isenabled()
            _settle, _hold = settle, hold and _ends_with_command
            gc.disable()
        _depth += 1
    try:
        if owed:  # outside the lock: a finalizer the collection runs may pause in its turn
            gc.collect(1)
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                if _hold:
                    _held = True
                elif not _held:
                    if _settle and not gc.get_freeze_count():  # unfreeze would thaw what a warm process froze
                        gc.freeze()
                        gc.unfreeze()
                    gc.enable()


def process_ends_with_command() -> None:
    """This process ends when its command returns (the console script): a pause with ``hold=True``
    ends held, the collector off until the next such pause or the process's end."""
    global _ends_with_command
    _ends_with_command = True


def graph_files_only(*paths: Path | str | None) -> bool:
    """Whether every one of ``paths`` is a graph file (not a folder, a run id, a model script or
    nothing: a command on those may compile, or read a whole run): a command on such inputs only
    reads and checks or compares graphs, and pauses the collector for its whole run."""
    return bool(paths) and all(p is not None and Path(p).suffix != ".py" and Path(p).is_file() for p in paths)


def without_gc(fn: F) -> F:
    """``fn`` run inside :func:`gc_paused`."""

    @functools.wraps(fn)
    def paused(*args: Any, **kwargs: Any) -> Any:
        with gc_paused():
            return fn(*args, **kwargs)

    return paused  # type: ignore[return-value]

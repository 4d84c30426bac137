"""Run a command on one roomy block of CPython's frame stack, so deep code stops mapping memory per call.

CPython 3.11 and later keep Python frames on a stack made of blocks ("chunks", 16 KiB), not on the
heap. When a frame does not fit in the current block, a new block is mapped (``mmap``); when the first
frame of a block returns, the block is unmapped at once. A loop that keeps calling a function whose
frame starts a block pays an ``mmap``, a page fault and a ``munmap`` per call. A compile is such a
loop: Dynamo, AOT and TorchAir call small functions millions of times, at depths that shift with
every frame above them. Measured on a 32-layer Llama compile under sim (``strace -c``): TorchAir's own
script made 111k ``mmap`` calls, ``airctl compile`` (a deeper stack: typer, the pipeline, the capture)
556k, about 3.5 s of system time, spread over whatever torch code sat at a block edge.

:func:`call_roomy` runs a call under one frame whose code object claims a large value stack, so
CPython maps one block of :data:`BLOCK_BYTES` for it and every frame the call makes fits in that
block's spare half: no block is mapped or unmapped under it. The claimed stack is never written, so
the kernel backs only the pages the deeper frames touch. Where frames live on the heap (3.10,
other interpreters) it is a plain call.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

BLOCK_BYTES = 2 << 20  # the block CPython maps for the roomy frame; about half is left for the frames under it
_SLOT = 8  # bytes per frame slot (a pointer)
_OVERHEAD_SLOTS = 1000  # CPython adds this many slots to a frame's size when it sizes a new block
_ROOMY = sys.implementation.name == "cpython" and sys.version_info >= (3, 11)


def _call(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    return fn(*args, **kwargs)


def _roomy_code(code: types.CodeType) -> types.CodeType:
    """``code`` claiming a value stack just over half a block: CPython's smallest block that holds a
    frame of that size (doubling from 16 KiB until it holds the frame plus its overhead) is then
    :data:`BLOCK_BYTES`, with the rest free for deeper frames."""
    half_block_slots = BLOCK_BYTES // 2 // _SLOT
    return code.replace(co_stacksize=code.co_stacksize + half_block_slots - _OVERHEAD_SLOTS + 64)


_roomy_call: Callable[[Callable[..., Any], tuple, dict], Any] = (
    types.FunctionType(_roomy_code(_call.__code__), _call.__globals__, "_roomy_call") if _ROOMY else _call)


def call_roomy(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, with every frame under it on one block of the frame stack (see the module)."""
    return _roomy_call(fn, args, kwargs)

"""Signals that land while Dynamo compiles a frame are raised where torch can take them.

airctl's handlers raise at the next bytecode (:mod:`airctl.pipeline.run.signals`). Inside a
compile that bytecode is often Python code torch's C++ called: a fake-tensor kernel, a dispatch
mode's ``__torch_dispatch__``, a mode's ``__enter__`` between its push and its bookkeeping. An
exception there cannot always pass back through C++, and the process aborted (exit -6,
``terminate called after throwing an instance of 'python_error'``, or c10's ``trying to set the
current UNKNOWN_MODE, but one already exists``) for about one in ten signals sent during Dynamo's
trace and AOT (docs/reliability.md).

So for the length of each frame compile (``torch._dynamo.convert_frame._compile``: Dynamo's trace,
then AOT and the backend's passes and conversion) SIGINT, SIGTERM and SIGHUP are only recorded.
The first one recorded is raised at the next safe point (:func:`_safe_points`: Dynamo's bytecode
step, AOT's two stages, each node TorchAir converts; Python called by Python, no mode half-entered)
or when the frame compile ends, whichever comes first, through the process's own handler, so the
run ends ``interrupted`` or ``terminated`` as at any other moment. One landing in AOT's metadata
pass or its joint graph's capture waits for the stage's end.

The user's pass plugins (Python called from Python) run with the process's own handlers
(:func:`airctl.signal_guard.user_code`, which :mod:`airctl.pipeline.pass_hooks` wraps around each), so a
plugin that never returns still stops at one Ctrl-C; TorchAir's own passes stay held (their
patterns trace with fake tensors). A second signal while one waits is raised at once, as before
this module: the way out of a compile stuck in C code. Only the main thread holds signals (Python
runs handlers nowhere else); a signal with no Python handler (the default action, ignored) is left
alone.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from airctl import signal_guard
from airctl.hooks.patching import Patches
from airctl.signal_guard import Holder

WAITING = (b"airctl: interrupt received; the compile stops at its next safe point "
           b"(Ctrl-C again to stop at once)\n")


def compile_holder() -> Holder:
    """A hold for frame compiles: a Ctrl-C recorded says so on stderr, a second one is raised at once."""
    return Holder(note=WAITING, second_at_once=True)


def patch(p: Patches) -> Holder | None:
    """Hold signals during Dynamo's frame compiles (see the module); None, and nothing patched, when
    Dynamo's internals are not the ones this was written against."""
    try:
        from torch._dynamo import convert_frame, symbolic_convert
    except ImportError:
        return None
    compile_frame = getattr(convert_frame, "_compile", None)
    translator = getattr(symbolic_convert, "InstructionTranslatorBase", None)
    if not callable(compile_frame) or not callable(getattr(translator, "step", None)):
        return None
    held = compile_holder()
    p.defer(held.restore_all)  # undone last: no hold outlives the capture
    p.setattr(convert_frame, "_compile", _holding(compile_frame, held))
    for owner, name in _safe_points(translator):
        p.setattr(owner, name, _checked(getattr(owner, name), held))
    signal_guard.lift_with(held.released)
    p.defer(lambda: signal_guard.lift_with(None))
    return held


def _safe_points(translator: type) -> list[tuple[Any, str]]:
    """Where a signal recorded is raised: the start of calls Python makes from Python, inside no mode's
    ``__enter__``. Dynamo's bytecode step; AOT's graph capture and its compile, each called once by
    ``aot_module_simplified`` (after the metadata pass, after the joint graph's capture); each node TorchAir
    converts into GE. Those this install lacks are left out."""
    points: list[tuple[Any, str]] = [(translator, "step")]
    try:
        from torch._functorch import aot_autograd
    except ImportError:
        aot_autograd = None
    for name in ("aot_stage1_graph_capture", "aot_stage2_compile"):
        if callable(getattr(aot_autograd, name, None)):
            points.append((aot_autograd, name))
    try:
        from torchair.npu_fx_compiler import _NpuGraphConverter
    except ImportError:
        return points
    if callable(_NpuGraphConverter.__dict__.get("run_node")):
        points.append((_NpuGraphConverter, "run_node"))
    return points


def _holding(compile_frame: Callable[..., Any], holder: Holder) -> Callable[..., Any]:
    @functools.wraps(compile_frame)
    def held_compile(*args: Any, **kwargs: Any) -> Any:
        with signal_guard.deferred_signals(holder):  # the main thread's compiles: Python runs handlers there only
            return compile_frame(*args, **kwargs)

    return held_compile


def _checked(call: Callable[..., Any], holder: Holder) -> Callable[..., Any]:
    got = holder.got

    @functools.wraps(call)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if got and threading.current_thread() is threading.main_thread():  # another thread's compile: not its
            holder.deliver()
        return call(*args, **kwargs)

    return checked

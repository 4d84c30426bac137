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
pass or its joint graph's capture waits for the stage's end; in airctl's listener and the user's
pass plugins, which TorchAir's Python calls from Python: they run with the process's own handlers
(:class:`Released`), so a plugin that never returns still stops at one Ctrl-C. A second signal while one waits is
raised at once, as before this module: the way out of a compile stuck in C code. Only the main
thread holds signals (Python runs handlers nowhere else); a signal with no Python handler (the
default action, ignored) is left alone.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from airctl.hooks.patching import Patches
from airctl.signal_guard import HELD

WAITING = (b"airctl: interrupt received; the compile stops at its next safe point "
           b"(Ctrl-C again to stop at once)\n")


class Holder:
    """The signals recorded while frame compiles run in the main thread (nested compiles share them)."""

    def __init__(self) -> None:
        self.depth = 0
        self.got: list[int] = []
        self.saved: dict[int, Any] = {}  # the handlers replaced while held

    def enter(self) -> bool:
        if threading.current_thread() is not threading.main_thread():
            return False
        if self.depth == 0:
            self._hold()
        self.depth += 1
        return True

    @contextmanager
    def released(self) -> Iterator[None]:
        """The process's own handlers for the block: airctl's listener and the user's pass plugins, which
        TorchAir's Python calls from Python (a plugin that never returns still stops at one Ctrl-C). A
        signal recorded before is raised first."""
        if not self.saved or threading.current_thread() is not threading.main_thread():
            yield
            return
        self.deliver()
        self._restore()
        try:
            yield
        finally:
            if self.depth > 0:
                self._hold()

    def _hold(self) -> None:
        for signum in HELD:
            handler = signal.getsignal(signum)
            if callable(handler) and handler != self.record:
                self.saved[signum] = handler
                signal.signal(signum, self.record)

    def leave(self) -> None:
        self.depth -= 1
        if self.depth == 0:
            self.deliver()
            self._restore()

    def record(self, signum: int, frame: Any) -> None:
        if self.got:  # asked twice: now, wherever the compile is
            self.got.clear()
            self._restore()
            signal.raise_signal(signum)
            return
        self.got.append(signum)
        if signum == signal.SIGINT:
            try:
                os.write(2, WAITING)  # not sys.stderr: the handler may run inside its write
            except OSError:
                pass

    def deliver(self) -> None:
        """Raise the signal recorded, if any, through the process's handler (see the module)."""
        if self.got:
            signum = self.got.pop(0)
            self.got.clear()
            self._restore()
            signal.raise_signal(signum)  # its handler runs here, at this frame's next bytecode

    def _restore(self) -> None:
        for signum, handler in self.saved.items():
            if signal.getsignal(signum) == self.record:
                signal.signal(signum, handler)
        self.saved.clear()


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
    holder = Holder()
    p.setattr(convert_frame, "_compile", _holding(compile_frame, holder))
    for owner, name in _safe_points(translator):
        p.setattr(owner, name, _checked(getattr(owner, name), holder))
    return holder


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


class Released:
    """``listener`` with each of its methods called under :meth:`Holder.released`."""

    def __init__(self, listener: Any, holder: Holder) -> None:
        self._listener, self._holder = listener, holder

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._listener, name)
        if not callable(value):
            return value
        holder = self._holder

        @functools.wraps(value)
        def released_call(*args: Any, **kwargs: Any) -> Any:
            with holder.released():
                return value(*args, **kwargs)

        return released_call


def _holding(compile_frame: Callable[..., Any], holder: Holder) -> Callable[..., Any]:
    @functools.wraps(compile_frame)
    def held_compile(*args: Any, **kwargs: Any) -> Any:
        if not holder.enter():
            return compile_frame(*args, **kwargs)
        try:
            return compile_frame(*args, **kwargs)
        finally:
            holder.leave()

    return held_compile


def _checked(call: Callable[..., Any], holder: Holder) -> Callable[..., Any]:
    got = holder.got

    @functools.wraps(call)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if got:
            holder.deliver()
        return call(*args, **kwargs)

    return checked

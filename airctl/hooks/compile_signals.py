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
(:func:`airctl.signal_guard.user_code`, which :mod:`airctl.passes.compose` wraps around each), so a
plugin that never returns still stops at one Ctrl-C; TorchAir's own passes stay held (their
patterns trace with fake tensors). A second signal while one waits is raised at once, as before
this module: the way out of a compile stuck in C code. Only the main thread holds signals (Python
runs handlers nowhere else); a signal with no Python handler (the default action, ignored) is left
alone.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from airctl import signal_guard
from airctl.hooks.patching import Patches
from airctl.signal_guard import HELD

WAITING = (b"airctl: interrupt received; the compile stops at its next safe point "
           b"(Ctrl-C again to stop at once)\n")


class Holder:
    """The signals recorded while frame compiles run in the main thread (nested compiles share them).

    Handlers are swapped with :meth:`_install`, which finishes every swap even when a pending signal's
    handler raises inside ``signal.signal`` (CPython runs pending handlers there), so no ``record`` is
    left installed past the outermost compile."""

    def __init__(self) -> None:
        self.got: list[int] = []
        self.saved: dict[int, Any] = {}  # the process's handlers, while held
        self._took: list[bool] = []  # per frame compile in progress: whether it put the hold on

    def enter(self) -> None:
        took = not self.saved
        self._took.append(took)
        if took:
            self._hold()

    def leave(self) -> None:
        if self._took and self._took.pop():
            try:
                self.deliver()
            finally:
                self._restore()

    @contextmanager
    def released(self) -> Iterator[None]:
        """The process's own handlers for the block (the user's pass plugins: Python called from Python,
        so a plugin that never returns still stops at one Ctrl-C). A signal recorded before is raised first."""
        if not self.saved or threading.current_thread() is not threading.main_thread():
            yield
            return
        try:
            self.deliver()
        finally:
            self._restore()
        try:
            yield
        finally:
            if self._took and not self.saved:
                self._hold()

    def record(self, signum: int, frame: Any) -> None:
        if self.got:  # asked twice: now, wherever the compile is
            self.got.clear()
            self._handler(signum)(signum, frame)
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
            signum = self.got[0]
            self.got.clear()
            self._handler(signum)(signum, None)

    def restore_all(self) -> None:
        """The process's handlers back, whatever compiles are in progress (the capture is over)."""
        self._took.clear()
        self.got.clear()
        self._restore()

    def _handler(self, signum: int) -> Any:
        handler = self.saved.get(signum)
        return handler if callable(handler) else signal.default_int_handler

    def _hold(self) -> None:
        held = {}
        for signum in HELD:
            handler = signal.getsignal(signum)
            if callable(handler) and handler != self.record:
                held[signum] = handler
        self.saved.update(held)
        self._install(dict.fromkeys(held, self.record))

    def _restore(self) -> None:
        back = {signum: handler for signum, handler in self.saved.items() if signal.getsignal(signum) == self.record}
        self._install(back)
        self.saved.clear()

    @staticmethod
    def _install(handlers: dict[int, Any]) -> None:
        """``signal.signal`` for each; one interrupted by a pending handler's exception is done again,
        and the first such exception raised once all are in place."""
        raised: BaseException | None = None
        for signum, handler in handlers.items():
            while True:
                try:
                    signal.signal(signum, handler)
                    break
                except BaseException as error:  # noqa: BLE001 - a pending signal's handler, run inside the call
                    raised = raised or error
        if raised is not None:
            raise raised


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
    p.defer(holder.restore_all)  # undone last: no hold outlives the capture
    p.setattr(convert_frame, "_compile", _holding(compile_frame, holder))
    for owner, name in _safe_points(translator):
        p.setattr(owner, name, _checked(getattr(owner, name), holder))
    signal_guard.lift_with(holder.released)
    p.defer(lambda: signal_guard.lift_with(None))
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


def _holding(compile_frame: Callable[..., Any], holder: Holder) -> Callable[..., Any]:
    @functools.wraps(compile_frame)
    def held_compile(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():  # Python runs handlers there only
            return compile_frame(*args, **kwargs)
        try:
            holder.enter()
            return compile_frame(*args, **kwargs)
        finally:
            holder.leave()

    return held_compile


def _checked(call: Callable[..., Any], holder: Holder) -> Callable[..., Any]:
    got = holder.got

    @functools.wraps(call)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if got and threading.current_thread() is threading.main_thread():  # another thread's compile: not its
            holder.deliver()
        return call(*args, **kwargs)

    return checked

"""Torch's process-wide tracing state, as it was before a compile, after it whatever happened.

Dynamo, AOT autograd and TorchAir enter torch's modes (the fake-tensor, proxy and functional
modes, ``TorchDispatchMode`` and ``TorchFunctionMode`` stacks, ``no_grad``) with ``with`` blocks.
An interrupt that lands inside one of those modes' ``__enter__``, after it pushed itself and
before it returned, skips its ``__exit__``: the mode stays on for the rest of the process. In a
process that goes on (a notebook where Ctrl-C stopped one compile, bisect's and repro's loops,
airctl used as a library, a test worker) every later compile then fails with errors that name
fake tensors ("Cannot access data pointer of Tensor (e.g. FakeTensor ...)", "Please convert all
Tensors to FakeTensors first") and say nothing of the interrupt that caused them.

:func:`torch_state_kept` takes what is on at the start of a compile and, at its end, takes off
whatever is still on that was not: the run that was interrupted ends as it did, and the next one
starts where the first one started.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TorchState:
    """What a compile may leave on: the mode stacks' depths, the infra modes, grad mode, the tracing context."""

    dispatch_depth: int = 0
    function_depth: int = 0
    infra: tuple[tuple[Any, Any], ...] = ()  # (mode key, the mode set for it, or None)
    grad_enabled: bool = True
    tracing_context: Any = None

    @classmethod
    def now(cls) -> TorchState:
        """The state of this thread now; torch's defaults when torch is not imported yet (nothing can be on)."""
        torch = sys.modules.get("torch")
        if torch is None:
            return cls()
        c = torch._C
        keys = tuple(c._TorchDispatchModeKey.__members__.values())
        return cls(c._len_torch_dispatch_stack(), c._len_torch_function_stack(),
                   tuple((k, c._get_dispatch_mode(k)) for k in keys), torch.is_grad_enabled(), _tracing_context())

    def restore(self) -> list[str]:
        """Take off what is on now and was not in ``self``; what was taken off, in words (empty: nothing was)."""
        torch = sys.modules.get("torch")
        if torch is None:
            return []
        c = torch._C
        undone: list[str] = []
        before = dict(self.infra)
        for key in c._TorchDispatchModeKey.__members__.values():  # first: the stack's depth counts them
            now, then = c._get_dispatch_mode(key), before.get(key)
            if now is not then:
                c._unset_dispatch_mode(key)
                if then is not None:
                    c._set_dispatch_mode(then)
                undone.append(type(now).__name__ if now is not None else f"no {key.name.lower()} mode")
        while c._len_torch_dispatch_stack() > self.dispatch_depth:
            undone.append(type(c._pop_torch_dispatch_stack(None)).__name__)
        while c._len_torch_function_stack() > self.function_depth:
            undone.append(type(c._pop_torch_function_stack()).__name__)
        if torch.is_grad_enabled() != self.grad_enabled:
            torch.set_grad_enabled(self.grad_enabled)
            undone.append("no_grad" if self.grad_enabled else "enable_grad")
        if _tracing_context() is not self.tracing_context:
            _set_tracing_context(self.tracing_context)
            undone.append("tracing context")
        return undone


def _tracing_context() -> Any:
    guards = sys.modules.get("torch._guards")
    return getattr(getattr(guards, "_TLS", None), "tracing_context", None) if guards is not None else None


def _set_tracing_context(context: Any) -> None:
    guards = sys.modules.get("torch._guards")
    if guards is not None and hasattr(guards, "_TLS"):
        guards._TLS.tracing_context = context


@contextmanager
def torch_state_kept() -> Iterator[None]:
    """Torch's tracing state at the end of the block is what it was at its start (see the module)."""
    before = TorchState.now()
    try:
        yield
    finally:
        try:
            undone = before.restore()
        except Exception:  # noqa: BLE001 - a torch without these internals: nothing to put back, nothing lost
            log.debug("torch's tracing state could not be checked", exc_info=True)
        else:
            if undone:
                log.info("a compile left torch's %s on: taken off", ", ".join(undone))

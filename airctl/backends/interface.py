"""What a backend does for a run: the one interface the pipeline talks to (pip-audit's shape:
an interface, one module per implementation).

The pipeline never asks which backend it has; it asks the backend: open a session in which
``import torch_npu`` / ``import torchair`` work (:meth:`Backend.session`), adjust TorchAir's config
for what the hardware can do (:meth:`Backend.configure`), say what it assumed (:meth:`notes`),
name the process-group backend of its collectives, and attach what it observes on its devices.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from airctl.modes import Mode


class Backend:
    """A chosen backend (``sim`` or ``npu``) and why it was chosen; one instance per run."""

    name = "?"
    process_group = "gloo"  # torch.distributed backend of this backend's collectives
    graphs_run_on_cpu = False  # airctl's executor runs GE graphs on the CPU (a GE graph alone can be profiled)
    forkable = False  # a process may fork children that then run this backend (no device runtime to lose)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Backend) and (self.name, self.reason) == (other.name, other.reason)

    def __hash__(self) -> int:
        return hash((self.name, self.reason))

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "reason": self.reason}

    def session(self, runs: Any, model_path: Path | None = None) -> contextlib.AbstractContextManager[Any]:
        """While the block runs, TorchAir imports and runs here; yields ``torchair``. ``runs`` is the
        run's execution (:class:`airctl.pipeline.run.execution.RunExecution`); ``model_path`` the
        script whose neighbours may declare its custom ops."""
        raise NotImplementedError

    def configure(self, config: Any, mode: Mode) -> str | None:
        """Adjust TorchAir's ``CompilerConfig`` for this backend; returns a note when it changed something."""
        return None

    def notes(self) -> list[str]:
        """What this backend assumed during the run, for the ledger's notes."""
        return []

    def hint(self, message: str, model_path: str | None) -> str | None:
        """What to do about a compile error this backend knows the cause of (None: nothing special)."""
        return None

    def warm(self, first_use: bool = False) -> None:
        """Import now what every run of this backend imports (torch's compiler stack, TorchAir), so
        that processes forked from this one start warm (:mod:`airctl.pipeline.ranks.forks`); only
        called where :attr:`forkable`. ``first_use``: also what a run imports and caches on first
        use (a long-lived warm process: worth seconds of its warm-up, docs/warm.md)."""

    def profiler_module(self) -> Any:
        """``torch_npu.profiler`` as this backend provides it, or None."""
        return None

    @contextlib.contextmanager
    def observing_streams(self, traced: Any) -> Iterator[None]:
        """Stream and event calls the user's script makes directly are reported to ``traced``."""
        yield

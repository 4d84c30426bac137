"""Errors airctl raises, and the exit codes the CLI maps them to.

Each error may carry where it happened (file, line, column, node) and a hint. The CLI renders
them as ``file:line:col: error: message`` plus a ``hint:`` line (style.md §9).

Library code raises :class:`AirctlError`; ``airctl.cli.main`` is the one place that turns it
into that message and its :class:`ExitCode`. A command that has already shown its outcome and
only needs a non-zero status raises :class:`CommandExit` (:class:`FindingsExit` for "ran, and
found problems": exit 1).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from typing import Any, TypeVar

E = TypeVar("E", bound=BaseException)


class ExitCode(enum.IntEnum):
    OK = 0
    FINDINGS = 1  # the command ran, and found errors (check, diff --exit-code, ...)
    USAGE = 2  # bad input: file, spec, option
    COMPILE_FAILED = 3  # the model compiled with errors, or its outputs did not match eager
    SCRIPT_FAILED = 4  # the user's own script raised
    INTERNAL = 70  # a bug in airctl: an exception that is not an AirctlError
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)
    HANGUP = 129  # SIGHUP (128 + 1): the terminal went away
    TERMINATED = 143  # SIGTERM (128 + 15): timeout, docker stop, Slurm, torchrun stopping a rank


class AirctlError(Exception):
    """Base error: a message plus optional location and hint."""

    exit_code: ExitCode = ExitCode.USAGE

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        node: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.node = node
        self.hint = hint

    @property
    def location(self) -> str:
        parts = [p for p in (self.file, self.line, self.column) if p is not None]
        return ":".join(str(p) for p in parts)

    def __str__(self) -> str:
        where = self.location
        text = f"{where}: {self.message}" if where else self.message
        if self.node:
            text += f" (node {self.node})"
        return text

    def to_json(self) -> dict:
        return {
            "type": type(self).__name__,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "node": self.node,
            "hint": self.hint,
        }


class ModelScriptError(AirctlError):
    """The model script is missing, raises, or exposes no model we can find."""


class UserCodeError(ModelScriptError):
    """The user's own code raised or exited: the model script at import, ``get_model()``/``get_inputs()``,
    or the model's forward/``step`` in the eager reference run. The hint holds the user's frames only."""

    exit_code = ExitCode.SCRIPT_FAILED


class AirctlBug(AirctlError):
    """airctl itself failed (not the user's script, not TorchAir): please report it, with --traceback."""

    exit_code = ExitCode.INTERNAL


class BackendError(AirctlError):
    """The requested backend cannot be used here (no CANN, no torch_npu wheel, ...)."""


class CompileError(AirctlError):
    """TorchAir (or Dynamo) failed to compile the model."""

    exit_code = ExitCode.COMPILE_FAILED


class UnconvertibleOps(CompileError):
    """TorchAir cannot convert the graph to GE: every op it cannot convert, not only the first it met
    (``ops``: one JSON record per op, :mod:`airctl.verify.converter_coverage`)."""

    def __init__(self, message: str, ops: list[dict], **where: Any) -> None:
        super().__init__(message, **where)
        self.ops = ops

    def to_json(self) -> dict:
        return {**super().to_json(), "unconvertible": list(self.ops)}


class ExecutionMismatch(AirctlError):
    """The compiled graph ran, but its outputs differ from eager PyTorch."""

    exit_code = ExitCode.COMPILE_FAILED


class SpecError(AirctlError):
    """A YAML pass file is invalid."""


class PassError(AirctlError):
    """A pass plugin failed; names the pass and, where known, the node and source line."""

    exit_code = ExitCode.COMPILE_FAILED


class GraphReadError(AirctlError):
    """A graph file (dump, ledger snapshot) cannot be read."""


class LedgerError(AirctlError):
    """A ledger folder is missing or malformed."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: raised where Python raises ``KeyboardInterrupt`` for SIGINT, and a
    ``KeyboardInterrupt`` itself, so every path that ends a run on Ctrl-C ends it on these too
    (:mod:`airctl.pipeline.run.signals`); the run's status says ``terminated`` and which signal."""

    def __init__(self, signum: int, name: str) -> None:
        super().__init__(f"stopped by {name}")
        self.signum = signum
        self.name = name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def interrupt_exit_code(error: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 128 + the signal for :class:`Terminated` (143 SIGTERM, 129 SIGHUP)."""
    return error.exit_code if isinstance(error, Terminated) else int(ExitCode.INTERRUPTED)


class CommandExit(Exception):
    """The command has shown its outcome; end with ``code`` and print nothing more.

    ``airctl run`` ends with the status of the user's script this way (its traceback, if any,
    is already on stderr).
    """

    def __init__(self, code: int) -> None:
        super().__init__(f"exit status {int(code)}")
        self.code = int(code)


class FindingsExit(CommandExit):
    """The command ran and found what it checks for: error findings (``check``), races
    (``profile``), selectors that match nothing (``passes explain``). Exit code 1."""

    def __init__(self, count: int = 0) -> None:
        super().__init__(ExitCode.FINDINGS)
        self.count = count


def exception_chain(error: BaseException, *, context: bool = True, suppressed: bool = True,
                    limit: int = 64) -> Iterator[BaseException]:
    """``error``, then what it wraps, each once: Dynamo's ``inner_exception`` first, then ``__cause__``,
    then (with ``context``) ``__context__``. The one walker of exception chains: Dynamo wraps backend
    errors, TorchAir re-raises copies (its pretty_error_msg), and an ``OSError`` it re-raises as text
    keeps the original only as ``__context__``. ``suppressed=False``: not through a context that
    ``raise ... from None`` hid (as Python's own traceback does)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(seen) < limit:
        seen.add(id(current))
        yield current
        nxt = getattr(current, "inner_exception", None)
        follow = context and (suppressed or not current.__suppress_context__)
        current = nxt if isinstance(nxt, BaseException) else current.__cause__ or (
            current.__context__ if follow else None)


def find_in_chain(error: BaseException | None, cls: type[E], suppressed: bool = True) -> E | None:
    """The first ``cls`` in ``error``'s chain (:func:`exception_chain`), or None."""
    if error is None:
        return None
    return next((e for e in exception_chain(error, suppressed=suppressed) if isinstance(e, cls)), None)

"""Console helpers shared by commands: stdout for results, stderr for progress and errors.

Nothing here imports torch. ``--json`` commands print only JSON on stdout via :func:`print_json`,
and run the user's code inside :func:`stdout_to_stderr`, so whatever a model script prints goes to
stderr. Text from graphs and scripts is untrusted: :func:`escape` (:func:`airctl.escape.terminal`)
neutralises rich markup and control characters (an ESC in a stream name must not reach the terminal
as an escape sequence).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

from rich.console import Console

from airctl.escape import one_line
from airctl.escape import terminal as escape

# emoji off: ":thumbs_up:" in a file name is text, not a picture (markup in data is escaped by `escape`)
out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)

# rich's default redraws a spinner 12.5 times a second from a thread of its own; each wake takes the
# GIL from the compile running beside it (docs/performance.md, "Capture overhead")
SPINNER_PER_SECOND = 4.0


class _Silent:
    def update(self, *args: Any, **kwargs: Any) -> None:
        pass


class _Escaped:
    """A spinner whose messages are shown as text: they name model files, nodes and streams, and rich
    would read ``[...]`` in them as markup (a ``[/v2]`` in a path raised) and pass an ESC through."""

    def __init__(self, spinner: Any) -> None:
        self._spinner = spinner

    def update(self, text: str) -> None:
        self._spinner.update(escape(text))


@contextlib.contextmanager
def status(text: str) -> Iterator[Any]:
    """A spinner on stderr with ``text`` while a long step runs (``.update(msg)`` says how far it got;
    ``msg`` is text, escaped here). Where stderr is no terminal (a pipe, a file, CI) rich's transient
    spinner shows nothing: then no spinner runs at all, and no thread wakes to draw nothing."""
    if not err.is_terminal:
        yield _Silent()
        return
    with err.status(text, spinner="dots", refresh_per_second=SPINNER_PER_SECOND) as spinner:
        yield _Escaped(spinner)


@contextlib.contextmanager
def stdout_to_stderr(enabled: bool = True) -> Iterator[None]:
    """While the block runs, what anything prints to stdout goes to stderr — Python's ``print`` and, when
    stdout is the process's file descriptor 1, C code and loggers holding the real stream too."""
    if not enabled:
        yield
        return
    original = sys.stdout
    original.flush()
    saved: int | None = None
    try:
        if original.fileno() == 1:
            saved = os.dup(1)
            os.dup2(2, 1)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        saved = None  # stdout is not a file descriptor (a test's buffer): Python-level is enough
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        with contextlib.suppress(Exception):
            original.flush()  # what loggers wrote to the real stream object goes to stderr still
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def seconds(value: float | None) -> str:
    """A duration for a table cell: ``412.3 ms`` under a second, else ``2.41 s``; nothing for None."""
    return "" if value is None else f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def print_json(data: Any) -> None:
    """``data`` as JSON on stdout: an object that writes itself (``write_json(stream)``: a table of
    unbounded rows, one row at a time) writes itself; one with ``to_json()`` is made JSON only now
    (None: nothing to print, a run that failed before its result); None prints nothing."""
    write = getattr(data, "write_json", None)
    if callable(write):
        write(sys.stdout)
    else:
        to_json = getattr(data, "to_json", None)
        if callable(to_json):
            data = to_json()
        if data is None:
            return
        sys.stdout.write(json.dumps(data, indent=2, default=_plain) + "\n")
    sys.stdout.flush()


def _plain(value: Any) -> Any:
    """JSON for what json cannot write: objects with ``to_json()`` (the run index), else their text."""
    to_json = getattr(value, "to_json", None)
    return to_json() if callable(to_json) else str(value)


def render_error(error: Exception, label: str = "[bold red]error:[/bold red]") -> None:
    """``file:line:col: error: message (node n)`` and its ``hint:`` line on stderr; ``label``: a warning's."""
    from airctl.errors import AirctlError

    if isinstance(error, AirctlError):
        where = error.location
        prefix = f"{one_line(where)}: " if where else ""
        node = f" [dim](node {escape(error.node)})[/dim]" if error.node else ""
        err.print(f"{prefix}{label} {escape(error.message)}{node}")
        if error.hint:
            err.print(f"[cyan]hint:[/cyan] {escape(error.hint)}")
    else:
        err.print(f"{label} {escape(str(error))}")

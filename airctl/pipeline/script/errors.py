"""How a user script's end maps to what ``python SCRIPT.py`` would have shown and returned.

- ``sys.exit(n)`` / ``SystemExit``: exit code ``n`` (None → 0; a non-int is printed to stderr
  and gives 1, as the interpreter does);
- an uncaught exception: the traceback on stderr through ``sys.excepthook`` (so a hook the
  script installed still runs) and exit code 1.

The traceback shown is the user's: the frames airctl adds between ``airctl run`` and the
script (runpy, airctl's runner) and inside it (airctl's wrappers around TorchAir's backend and
observer) are removed from every traceback in the exception chain. Frames of torch, TorchAir
and the sim stand-ins stay, because on an NPU the same torch/TorchAir/torch_npu frames appear.
"""

from __future__ import annotations

import io
import runpy
import sys
import traceback
import types
from dataclasses import dataclass
from pathlib import Path

import airctl

_AIRCTL = Path(airctl.__file__).resolve().parent
# airctl's own layers: everything except the sim stand-ins, which play torch_npu's part
_HIDDEN_DIRS = tuple(str(_AIRCTL / d) for d in ("pipeline", "cli", "ledger", "instrument", "verify", "io", "graph"))
_HIDDEN_FILES = (str(_AIRCTL / "__main__.py"), runpy.__file__, "<frozen runpy>")


def _hidden(filename: str) -> bool:
    return filename.startswith(_HIDDEN_DIRS) or filename in _HIDDEN_FILES


def strip_tb(tb: types.TracebackType | None) -> types.TracebackType | None:
    """A copy of the traceback chain ``tb`` without airctl's frames."""
    frames = []
    while tb is not None:
        if not _hidden(tb.tb_frame.f_code.co_filename):
            frames.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(frames):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def strip_exception(exc: BaseException) -> BaseException:
    """Remove airctl's frames from ``exc`` and every exception chained to it (in place)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        e.__traceback__ = strip_tb(e.__traceback__)
        todo.extend([e.__cause__, e.__context__])
        todo.extend(getattr(e, "exceptions", ()) or ())
    return exc


def format_user_traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


@dataclass
class ScriptEnd:
    exit_code: int
    exception: BaseException | None = None  # the uncaught exception, frames stripped
    message: str | None = None  # a SystemExit message the interpreter would print
    traceback: str | None = None

    @property
    def failed(self) -> bool:
        return self.exit_code != 0


def from_system_exit(e: SystemExit) -> ScriptEnd:
    code = e.code
    if code is None:
        return ScriptEnd(0)
    if isinstance(code, bool):
        return ScriptEnd(int(code))
    if isinstance(code, int):
        return ScriptEnd(code)
    return ScriptEnd(1, message=str(code))


def from_exception(e: BaseException) -> ScriptEnd:
    strip_exception(e)
    return ScriptEnd(1, exception=e, traceback=format_user_traceback(e))


def show(end: ScriptEnd) -> None:
    """Print what the interpreter prints when a script ends this way (stderr)."""
    if end.message is not None:
        print(end.message, file=sys.stderr)
    if end.exception is not None:
        e = end.exception
        hook = sys.excepthook
        if hook is sys.__excepthook__:
            # sys.__excepthook__ writes to the process's stderr file; sys.stderr may be replaced
            buf = io.StringIO()
            traceback.print_exception(type(e), e, e.__traceback__, file=buf)
            sys.stderr.write(buf.getvalue())
        else:
            hook(type(e), e, e.__traceback__)
        sys.stderr.flush()

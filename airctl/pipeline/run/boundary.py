"""The edge between airctl and the user's code: the ways user code ends the process behind our back.

``sys.exit`` is an exception and every run catches it. Two ways are not:

- ``os._exit(n)`` ends the process at once, with no ``finally`` and no ``atexit``: the ledger stayed
  ``running`` and ``airctl compile`` exited ``n`` with no word (0 looked like success). While a run
  is open, :func:`guarded_exit` replaces ``os._exit`` *for this process only* (a forked child, the
  pbtxt writer of :mod:`airctl.aside` or a DataLoader worker, exits as before):
  the run is closed with the caller's file and line, then the process ends.
- A non-daemon thread the user's code started and left running keeps Python from exiting after
  ``main`` returns: airctl printed its summary and hung. :func:`leftover_threads` names them;
  the console script warns and ends the process (:mod:`airctl.cli.main`).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from airctl.io.paths import AIRCTL_PACKAGE

OnExit = Callable[[int, str], int]  # (the code user code asked for, where it asked) -> the code to exit with


def caller(skip: int = 2) -> str:
    """``file:line (in function)`` of the innermost frame outside airctl (the code that called)."""
    frame = sys._getframe(skip)
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(AIRCTL_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return "unknown code"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} (in {frame.f_code.co_name})"


@contextmanager
def guarded_exit(on_exit: OnExit) -> Iterator[None]:
    """While the block runs, ``os._exit(n)`` in this process first calls ``on_exit(n, where)`` (which
    closes the run and says what happened), then ends the process with the code it returns."""
    real = os._exit
    pid = os.getpid()

    def _exit(code: int) -> None:  # noqa: ANN401 - os._exit's own signature
        if os.getpid() != pid:
            real(code)
        try:
            final = on_exit(int(code), caller())
        except BaseException:  # noqa: BLE001 - the process ends whatever happened while saying so
            final = code
        flush_std_streams()
        real(final)

    os._exit = _exit
    try:
        yield
    finally:
        if os._exit is _exit:
            os._exit = real


def leftover_threads(before: frozenset[int] = frozenset()) -> list[threading.Thread]:
    """Non-daemon threads still running besides the main one (and those in ``before``, ids of threads
    that were running already): each keeps the interpreter from exiting."""
    main = threading.main_thread()
    return [t for t in threading.enumerate()
            if t is not main and not t.daemon and t.is_alive() and id(t) not in before]


def running_threads() -> frozenset[int]:
    return frozenset(id(t) for t in threading.enumerate())


def describe_threads(threads: list[threading.Thread]) -> str:
    """``'worker' (running serve at model.py:12)``, one per thread, where its frame can be had."""
    frames = sys._current_frames()
    parts = []
    for t in threads:
        frame = frames.get(t.ident) if t.ident is not None else None
        where = ""
        if frame is not None:
            outer = frame
            while outer.f_back is not None and "threading.py" not in outer.f_back.f_code.co_filename:
                outer = outer.f_back
            where = f" (in {outer.f_code.co_name} at {outer.f_code.co_filename}:{outer.f_lineno})"
        parts.append(f"{t.name!r}{where}")
    return ", ".join(parts)


def exit_leaving_threads(code: int, who: str = "airctl", before: frozenset[int] = frozenset(),
                         whole_process: bool = False, final_code: Callable[[int], int] | None = None) -> None:
    """End the process with ``code``. Where the user's code left non-daemon threads running (Python
    would wait for them forever), name them in a warning and end it at once, without waiting;
    ``before``: the threads already running when the command started (not the user's).
    ``whole_process`` (a console script, not a call from a test): :func:`end_process`, not ``sys.exit``.
    ``final_code``: asked for the code once more just before the process ends (a signal held since)."""
    threads = leftover_threads(before)
    if not threads:
        if whole_process:
            end_process(code, final_code)
        sys.exit(code)
    sys.stderr.write(f"{who}: warning: the user's code left {len(threads)} thread(s) running: "
                     f"{describe_threads(threads)}; exiting without waiting for them\n")
    flush_std_streams()
    os._exit(final_code(code) if final_code else code)


def end_process(code: int, final_code: Callable[[int], int] | None = None) -> None:
    """End the program as Python would, less its last step: ``atexit`` handlers (logging's flush,
    torch's and TorchAir's), the standard streams flushed, the files user code left open closed,
    then ``os._exit`` (with ``final_code(code)`` when given). What is skipped is the interpreter's
    teardown of every module and object, which after ``import torch`` and a compile takes about a
    second of CPU (docs/performance.md); of what it does, only closing files is seen outside the process."""
    finish_program()
    if final_code is not None:
        code = final_code(code)
    os._exit(code)


def close_open_files() -> None:
    """Close the file objects still open, as the teardown does when it collects them: what a script
    wrote into one it never closed (``log = open(...)`` at module level) is flushed, as under
    ``python script.py``. Outer objects first (text over buffered over raw: each close flushes into
    the one below); the standard descriptors stay open. Finding them means walking the whole heap (half
    a million objects after a compile, about a third of a second): skipped when no regular file is open
    for writing, which is what a buffer left unflushed would go to."""
    if not _writing_to_a_file():
        return
    import _io
    import gc
    from itertools import compress

    # the C base classes: a plain type check, where io.IOBase (an ABC) would ask every object's class;
    # each distinct type is asked once and the heap filtered in C. type(): no attribute of an object is read
    rank = {_io._TextIOBase: 0, _io._BufferedIOBase: 1, _io._RawIOBase: 2}
    heap = gc.get_objects()
    kinds = {t for t in set(map(type, heap)) if issubclass(t, _io._IOBase)}
    files = list(compress(heap, map(kinds.__contains__, map(type, heap))))
    del heap
    files.sort(key=lambda f: next((r for kind, r in rank.items() if issubclass(type(f), kind)), 3))
    for f in files:
        try:
            if not f.closed and f.fileno() > 2:
                f.close()
        except (OSError, ValueError):  # detached, broken, or in memory (io.UnsupportedOperation)
            pass


def _writing_to_a_file() -> bool:
    """Whether a descriptor past the standard three is a regular file open for writing (``/proc/self``;
    where it cannot be read, True: look)."""
    import stat

    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:
        return True
    for fd in fds:
        if fd <= 2:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
                flags = next((int(line.split()[1], 8) for line in info if line.startswith("flags:")), 0)
        except (OSError, ValueError):
            continue  # closed meanwhile (the listing's own descriptor), or not readable
        if flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR):
            return True
    return False


def finish_program() -> None:
    """What Python does when a program ends, of what is seen outside the process: the ``atexit``
    handlers, the standard streams flushed, the files left open closed (:func:`close_open_files`)."""
    import atexit

    atexit._run_exitfuncs()
    flush_std_streams()
    close_open_files()


def reopen_std_streams() -> list[str]:
    """Give the process back usable standard streams after the user's code closed them: a closed
    ``sys.stdout``/``sys.stderr`` object is made again on its descriptor, a closed descriptor 1 or 2
    is pointed at ``/dev/null`` (what was written there is lost, as the script asked, and no file the
    process opens later takes its number). airctl's own output then never fails on them, so a run
    that went well does not end in an error. The names of the streams reopened."""
    reopened = []
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            reopened.append(f"descriptor {fd}")
        stream = getattr(sys, name)
        if stream is None or getattr(stream, "closed", False):
            setattr(sys, name, open(fd, "w", encoding=getattr(stream, "encoding", None) or "utf-8",  # noqa: SIM115
                                    errors="replace", closefd=False, buffering=1))
            reopened.append(f"sys.{name}")
    return reopened


def flush_std_streams() -> None:
    """Flush stdout and stderr; a closed or broken one (``airctl ... | head``) is left as it is."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass

"""Open a file that airctl did not write itself (a ledger's, a profiler's) as what it must be.

A ledger is a folder anyone may have edited: ``latest`` may hold a megabyte of NULs or be a link
to ``/etc/passwd``, a stage file may be a FIFO (``open`` would block forever), an index may be
200 MB. Every such read goes through :func:`open_regular`: the file is opened without blocking
(``O_NONBLOCK``, so a FIFO or a device answers at once), checked to be a regular file on the
descriptor it was opened as (no race between the check and the read), optionally refused when it
is a link (``O_NOFOLLOW``), and read no further than a bound (:func:`read_regular`).

It sits on the floor beside :mod:`airctl.errors` (it imports nothing else of airctl), so ``io`` and
``ledger`` both use it without importing each other.

>>> import tempfile, os; d = tempfile.mkdtemp(); os.mkfifo(os.path.join(d, "f"))
>>> read_regular(Path(d) / "f", 10)
Traceback (most recent call last):
...
airctl.errors.LedgerError: .../f: not a regular file (a FIFO)
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from airctl.errors import AirctlError, LedgerError

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
_CHUNK = 1 << 20  # bytes read at a time from a file that grows while it is read


def kind_of(mode: int) -> str:
    """``"a FIFO"``, ``"a folder"``, ... for an ``st_mode`` that is not a regular file."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: Path | str, *, follow_links: bool = True,
                 error: type[AirctlError] = LedgerError, hint: str | None = None) -> BinaryIO:
    """``path`` opened for reading in binary, only when it is a regular file; else ``error`` naming
    it and what it is. Never blocks. ``follow_links=False`` refuses a symbolic link itself."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP and not follow_links:
            raise error("a link, where airctl expects a file it wrote", file=str(path),
                        hint=hint or "remove the link; airctl writes this file itself") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise error(f"not a regular file ({kind_of(mode)})", file=str(path),
                        hint=hint or "airctl reads only regular files here; remove it or give another path")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise


def read_regular(path: Path | str, limit: int, *, follow_links: bool = True,
                 error: type[AirctlError] = LedgerError, what: str = "file", hint: str | None = None) -> bytes:
    """The bytes of regular file ``path``; ``error`` when it holds more than ``limit`` bytes: refused
    from its size before any read, and nothing past ``limit + 1`` bytes is read should it grow."""
    with open_regular(path, follow_links=follow_links, error=error, hint=hint) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise too_large(path, limit, what, error, hint)
        data = f.read(size + 1)  # read(n) allocates n bytes first: the size, not the limit (4 GB for a gzip file)
        if len(data) > size:  # it grew since (or reports no size, as /proc does): on, a chunk at a time
            parts, total = [data], len(data)
            while total <= limit and (part := f.read(min(_CHUNK, limit + 1 - total))):
                parts.append(part)
                total += len(part)
            data = b"".join(parts)
    if len(data) > limit:
        raise too_large(path, limit, what, error, hint)
    return data


def too_large(path: Path | str, limit: int, what: str, error: type[AirctlError] = LedgerError,
              hint: str | None = None) -> AirctlError:
    """The error for a file over its limit (the docs' table of limits names each)."""
    return error(f"too large for a {what}: over {_size(limit)}", file=str(path),
                 hint=hint or f"a {what} airctl writes is far smaller; the file was replaced or damaged")


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n >= (1 << 20) and n % (1 << 20) == 0 else f"{n} bytes"


def check_regular(path: Path | str, *, error: type[AirctlError] = LedgerError, hint: str | None = None) -> None:
    """``error`` unless ``path`` is a regular file (opened without blocking, then closed)."""
    open_regular(path, error=error, hint=hint).close()


def check_folder(path: Path | str, *, error: type[AirctlError] = LedgerError, what: str = "folder",
                 hint: str | None = None) -> bool:
    """Whether folder ``path`` exists (False: it does not, and may be made); ``error`` when it is
    something else: a link to nothing (``mkdir`` would fail with "File exists"), a file, a FIFO, a device."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            raise error(f"the {what} is a link to nothing ({os.readlink(path)})", file=str(path),
                        hint=hint or "remove the link, create the folder it points to, or give another path") from None
        return False
    except NotADirectoryError:
        raise error(f"the {what} is under something that is not a folder", file=str(path),
                    hint=hint or "give a folder's path") from None
    if not stat.S_ISDIR(mode):
        kind = "a regular file" if stat.S_ISREG(mode) else kind_of(mode)
        raise error(f"the {what} is not a folder ({kind})", file=str(path),
                    hint=hint or "give a folder's path (--out)")
    return True


def read_json(path: Path | str, limit: int, what: str, *, too_large: str, unreadable: str,
              error: type[AirctlError] = LedgerError) -> Any:
    """The JSON value of file ``path``, written by another tool into a ledger (a profile trace, GE's
    statistics); ``error`` naming the file when it is over ``limit`` bytes (hint ``too_large``) or not
    JSON (hint ``unreadable``)."""
    path = Path(path)
    if path.stat().st_size > limit:
        raise error(f"{what} over {limit >> 20} MiB", file=str(path), hint=too_large)
    raw = read_regular(path, limit, error=error, what=what, hint=too_large)  # no FIFO, nothing past the limit
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:  # RecursionError: nested too deep
        raise error(f"unreadable {what}: {e}", file=str(path), hint=unreadable) from None

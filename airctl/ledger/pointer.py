"""``<out>/latest``, the current-run pointer: read as untrusted, written so that it always moves.

Reading: the pointer is a one-line file airctl writes, so anything else is refused before its
content is used or shown: a link (``latest`` → ``/etc/passwd`` is never opened), a FIFO or
folder (never blocks), more than :data:`MAX_BYTES` (a 200 MB ``latest`` costs one small read,
not gigabytes), and content that is not a run id (``..``, ``/``, NULs: :data:`RUN_ID`). The
error names the file and shows at most a short, escaped excerpt of it.

Writing: a temporary file beside it, renamed over it (readers see the old id or the new one).
When the temporary file cannot be written (a full disk), it is removed and the pointer is
rewritten in place: a pointer of a few dozen bytes already owns its disk block, so that needs
no new space, and a run that failed on a full disk still becomes the current one
(docs/ledger.md). Every failure path removes the temporary file.

>>> parse_run_id(b"20260101-120000-seed-1a2b\\n", "latest")
'20260101-120000-seed-1a2b'
>>> parse_run_id(b"..", "latest")
Traceback (most recent call last):
...
airctl.errors.LedgerError: latest: does not hold a run id: '..'
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from pathlib import Path

from airctl.errors import LedgerError
from airctl.limits import POINTER_BYTES
from airctl.safe_files import read_regular

MAX_BYTES = POINTER_BYTES  # a run id is under 100 bytes; airctl never writes more
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,254}")  # what new_run_id makes (slug characters), never . or ..
EXCERPT = 40
REPAIR_HINT = "airctl writes this file; delete it (the newest run is then current) or give --run ID"


def parse_run_id(data: bytes, where: str) -> str:
    """The run id ``data`` holds (one line; surrounding blanks allowed); LedgerError otherwise."""
    text = data.decode("utf-8", errors="replace").strip()
    if RUN_ID.fullmatch(text) and text not in (".", ".."):
        return text
    shown = text[:EXCERPT] + ("..." if len(text) > EXCERPT else "")
    raise LedgerError(f"does not hold a run id: {shown!r}", file=where, hint=REPAIR_HINT)


def read_pointer(path: Path) -> str:
    """The run id in pointer file ``path`` (see the module for what is refused)."""
    data = read_regular(path, MAX_BYTES, follow_links=False, what="current-run pointer", hint=REPAIR_HINT)
    return parse_run_id(data, str(path))


def write_pointer(path: Path, run_id: str) -> None:
    """Point ``path`` at ``run_id``: atomically, else (a full disk) in place; OSError when neither works.
    No temporary file is left behind, whatever fails."""
    run_id = parse_run_id(run_id.encode("utf-8"), str(path))
    payload = (run_id + "\n").encode("utf-8")
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(3)}.tmp"
    try:
        with open(tmp, "xb") as f:
            f.write(payload)
        os.replace(tmp, path)
        return
    except OSError as e:
        error = e
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()  # gone already after the rename
    if not _rewrite_in_place(path, payload):
        raise error


def _rewrite_in_place(path: Path, payload: bytes) -> bool:
    """``path`` (an existing regular pointer file, not a link) overwritten with ``payload``."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    with os.fdopen(fd, "wb", buffering=0) as f:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return False  # never write into a FIFO or a device
            f.write(payload)
            f.truncate()
            return True
        except OSError:
            return False

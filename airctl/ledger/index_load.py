"""Read ``index.json`` as untrusted bytes, then typed: the one parser under the reader and ``airctl runs``.

An index is a file anyone may have replaced: a FIFO (``open`` would block), a link into the
system, 200k nested brackets (Python's parser raises RecursionError), gigabytes. It is opened
as a regular file (:mod:`airctl.safe_files`), read up to :data:`MAX_BYTES`, parsed, and every
failure is a :class:`~airctl.errors.LedgerError` naming the file. A newer index ``version`` is
read as far as this airctl knows it, with a warning naming the version (unknown keys are kept
in ``Record.extra`` and written back unchanged). :func:`read_index` is the whole way from a ledger
folder to its checked :class:`~airctl.ledger.index.RunIndex`, as every reader shows it (a run whose
process died says ``died``).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from airctl.errors import LedgerError
from airctl.ledger.index import VERSION, RunIndex
from airctl.ledger.liveness import seen_alive
from airctl.ledger.record import INDEX
from airctl.limits import INDEX_BYTES
from airctl.safe_files import read_regular

MAX_BYTES = INDEX_BYTES  # refused from its size, before any read (docs/reliability.md "Limits")
log = logging.getLogger("airctl")


def load_index(path: Path) -> Any:
    """The parsed JSON of ``path`` (an ``index.json``); LedgerError for anything unreadable."""
    try:
        data = read_regular(path, MAX_BYTES, what=f"run index ({INDEX})",
                            hint="index.json is written by airctl; restore it, or list the runs with `airctl runs`")
        return json.loads(data.decode("utf-8"))
    except json.JSONDecodeError as e:
        raise LedgerError(f"corrupt {INDEX}: {e.msg}", file=str(path), line=e.lineno, column=e.colno) from e
    except RecursionError:
        raise LedgerError(f"corrupt {INDEX}: nested too deeply to be a run index", file=str(path)) from None
    except UnicodeDecodeError as e:
        raise LedgerError(f"corrupt {INDEX}: not UTF-8 (byte {e.start})", file=str(path)) from None
    except OSError as e:
        raise LedgerError(f"cannot read {INDEX}: {e.strerror or e}", file=str(path)) from e


def warn_if_newer(data: Any, known: int, file: str) -> None:
    """A warning (once per read) when the index says it has a newer ``version`` than ``known``."""
    version = data.get("version") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > known:
        log.warning("%s: warning: index version %d is newer than this airctl reads (%d); fields it does not "
                    "know are kept but not used (upgrade airctl to see them)", file, version, known)


def read_index(root: Path, *, warn: bool = True) -> RunIndex:
    """The checked, typed index of the ledger at ``root`` (LedgerError naming the file for anything
    wrong); ``warn``: say so when its version is newer than this airctl's."""
    path = Path(root) / INDEX
    data = load_index(path)
    if warn:
        warn_if_newer(data, VERSION, str(path))
    return RunIndex.read(seen_alive(data, root), file=str(path))

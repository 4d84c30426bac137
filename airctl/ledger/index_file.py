"""Rewrite ``index.json`` so that a full disk cannot leave a run without a valid index.

The writer (:mod:`airctl.ledger.writer`) rewrites the index atomically: a temporary file renamed
over it. On a full disk (or a file-size limit) that needs space the disk no longer has, so a
small index is written padded with trailing blanks (JSON allows them, :data:`RESERVE`) and, when
the temporary file cannot be written, the index is rewritten *in place*, compact, blank-padded
to the old size: no new space is needed. When even that does not fit, ever smaller forms are
tried (:func:`essential`) before a :class:`~airctl.errors.LedgerError` names the ledger.

>>> essential({"status": "failed", "graphs": [{"id": "g", "kind": "inference",
...            "stages": [{"index": 0, "name": "dynamo", "file": "f", "seconds": 1.0}]}]}, minimal=True)["graphs"]
[{'id': 'g', 'kind': 'inference', 'stages': [{'index': 0, 'name': 'dynamo', 'file': 'f'}]}]
"""

from __future__ import annotations

import contextlib
import errno
import json
from pathlib import Path
from typing import Any

from airctl.errors import LedgerError
from airctl.ledger.record import INDEX

RESERVE = 4096  # bytes an index.json takes at least: room for an in-place rewrite


def cannot_write(root: Path, error: OSError) -> LedgerError:
    """The error of a ledger write that failed; the hint follows the cause (a full disk, or the run's folder
    deleted or moved while the run was writing it)."""
    if error.errno == errno.ENOENT or not root.is_dir():
        return LedgerError(f"cannot write the ledger: its folder was deleted or moved while the run was writing "
                           f"it ({error.filename or root})", file=str(root),
                           hint="run the command again; leave the run's folder alone until it ends")
    return LedgerError(f"cannot write the ledger ({error.strerror or error}): {error.filename or root}",
                       file=str(root), hint="free space on the disk that holds it (df -h), or give another --out; "
                                            "what was written before is kept")


def essential(data: dict[str, Any], minimal: bool = False) -> dict[str, Any]:
    """The index with what a full disk can spare dropped: per-stage extras and the findings list
    (``minimal``: also every run-level field but the status and the error, and stages but their files)."""
    keep = ("index", "name", "file") if minimal else ("index", "name", "dialect", "changed", "nodes", "file", "text")
    graphs = [{"id": g.get("id"), "kind": g.get("kind"), "stages": [{k: s[k] for k in keep if k in s}
                                                                   for s in g.get("stages", [])]}
              for g in data.get("graphs", [])]
    if minimal:
        top = ("format", "version", "run_id", "created", "status", "command", "mode", "error")
        return {**{k: data.get(k) for k in top}, "graphs": graphs, "truncated_by_full_disk": True}
    return {**data, "graphs": graphs, "findings": [], "truncated_by_full_disk": True}


def write_index(root: Path, data: dict[str, Any], best_effort: bool = False) -> None:
    """Write ``data`` as ``root/index.json``: atomically, else in place (see the module); raises
    :class:`~airctl.errors.LedgerError` when nothing fits (``best_effort``: nothing is raised)."""
    tmp = root / (INDEX + ".tmp")
    text = json.dumps(data, indent=1, default=str)
    try:
        for slack in (max(0, RESERVE - len(text)), 1024, 0):
            try:
                tmp.write_text(text + "\n" + " " * slack, encoding="utf-8")
                break
            except OSError:
                if not slack:
                    raise
        tmp.replace(root / INDEX)
        return
    except BaseException as e:  # an interrupt between the write and the rename too: no half-written file left
        with contextlib.suppress(OSError):
            tmp.unlink()
        if not isinstance(e, OSError):
            raise
        error = e
    for payload in (data, essential(data), essential(data, minimal=True)):  # ever smaller
        if _rewrite_in_place(root / INDEX, json.dumps(payload, separators=(",", ":"), default=str).encode("utf-8")):
            return
    if not best_effort:
        raise cannot_write(root, error) from error


def _rewrite_in_place(path: Path, payload: bytes) -> bool:
    """``path`` overwritten where it is, blank-padded to its old size (the room stays for next time)."""
    try:
        size = path.stat().st_size
        if size < len(payload):
            return False
        with path.open("r+b") as f:
            f.write(payload + b" " * (size - len(payload)))
        return True
    except OSError:
        return False

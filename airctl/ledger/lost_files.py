"""Unlist from the index the files a run could not write, so the index never names a missing file.

A snapshot the background writer could not write (a full disk), or that a killed process never
wrote (a rank the launcher finishes), takes its stages out of ``index.json``; a readable text
that is missing is unlisted from its stage; a TorchAir dump whose compressed copy is missing is
listed under its own name again when that is still there. A note in ``notes`` counts what went.
"""

from __future__ import annotations

from pathlib import Path

from airctl.ledger.index import RunIndex


def missing_files(index: RunIndex, root: Path) -> set[str]:
    """The ledger-relative stage files (snapshots and texts) the index lists that are not on disk."""
    listed = {s.file for g in index.graphs for s in g.stages} | {
        s.text for g in index.graphs for s in g.stages if s.text}
    return {f for f in listed if not (root / f).is_file()}


def unlist(index: RunIndex, root: Path, lost: set[str], why: str) -> None:
    """Take the files ``lost`` (ledger-relative) out of ``index``, with a note saying ``why``."""
    dropped = 0
    for entry in index.graphs:
        kept = [s for s in entry.stages if s.file not in lost]
        dropped += len(entry.stages) - len(kept)
        entry.stages[:] = kept
        for stage in kept:
            if stage.text in lost:
                stage.text = None
    for dump in list(index.dumps):
        if dump.file in lost:
            original = dump.file.removesuffix(".gz")
            if (root / original).is_file():
                dump.file = original
            else:
                index.dumps.remove(dump)
    if index.notes is None:
        index.notes = []
    index.notes.append(f"{len(lost)} ledger file(s) could not be written ({why}); "
                       f"{dropped} stage(s) whose snapshot is missing are left out")

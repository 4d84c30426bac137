"""The names of a ledger's layout that every layer needs, and the one answer to "is this folder a ledger?".

A folder is a ledger (a run airctl wrote, or imported) when it holds ``index.json`` as a regular
file (docs/ledger.md). Readers (:mod:`airctl.ledger`), file writers that must not write into one
(:mod:`airctl.io.output_path`), the importer that must not import one, and SOURCE resolution all
ask :func:`is_ledger`. Like :mod:`airctl.errors`, this module imports no other airctl module.
"""

from __future__ import annotations

from pathlib import Path

INDEX = "index.json"
LATEST = "latest"  # the current-run pointer of a folder of runs (airctl.ledger.pointer)
PROFILE_DIR = "profile"  # a run's profile (airctl.profile.write), measured or predicted
TRACE_FILE = "trace.json"  # its Chrome trace


def is_runs_pointer(path: Path | str) -> bool:
    """Is ``path`` the current-run pointer of a folder of runs (named ``latest``, beside ledgers)?"""
    path = Path(path)
    if path.name != LATEST:
        return False
    try:
        return any(is_ledger(p) for p in path.parent.iterdir() if p.is_dir())
    except OSError:
        return False


def is_ledger(path: Path | str) -> bool:
    """Does ``path`` hold a ledger's ``index.json``?"""
    try:
        return (Path(path) / INDEX).is_file()
    except OSError:  # a name too long, a folder we may not enter: not a ledger we can read
        return False

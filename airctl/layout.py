"""The names of a ledger's layout that every layer needs, and the one answer to "is this folder a ledger?".

A folder is a ledger (a run airctl wrote, or imported) when it holds ``index.json`` as a regular
file (docs/ledger.md). Readers (:mod:`airctl.ledger`), file writers that must not write into one
(:mod:`airctl.io.output_path`), the importer that must not import one, and SOURCE resolution all
ask :func:`is_ledger`. Like :mod:`airctl.errors`, this module imports no other airctl module.
"""

from __future__ import annotations

from pathlib import Path

INDEX = "index.json"


def is_ledger(path: Path | str) -> bool:
    """Does ``path`` hold a ledger's ``index.json``?"""
    try:
        return (Path(path) / INDEX).is_file()
    except OSError:  # a name too long, a folder we may not enter: not a ledger we can read
        return False

"""Run ids and the folder of a new run: ``<out>/<time>-<label>-<4 hex>``, never an existing one.

A run's folder is made with an exclusive ``mkdir``, so two runs started in the same second with
the same label still get folders of their own (docs/ledger.md "The current run").

>>> slug("after:post_grad custom")
'after_post_grad_custom'
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import secrets
from pathlib import Path

from airctl.safe_files import check_folder


def slug(text: str) -> str:
    """``text`` as a file-name part: runs of anything but ``A-Za-z0-9_.-`` become one ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "stage"


def new_run_id(label: str) -> str:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{slug(label)[:40]}-{secrets.token_hex(2)}"


def make_run_folder(out_dir: Path | str, label: str) -> Path:
    """A new, empty run folder under ``out_dir`` (made absolute; created if missing)."""
    out = Path(os.path.abspath(out_dir))
    check_folder(out, what="folder of runs (--out)")  # a link to nothing, a file: said, not "File exists"
    out.mkdir(parents=True, exist_ok=True)
    while True:
        root = out / new_run_id(label)
        try:
            root.mkdir()
            return root
        except FileExistsError:
            continue

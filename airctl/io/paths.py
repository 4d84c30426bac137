"""Paths in what users share: relative to the working directory, else to the model's folder.

A race message, a critical path, bisect's "why" or a repro README is pasted into issues and chats;
``/home/alice/work/model.py:12`` there tells the reader nothing and leaks the machine's layout.
The ledger keeps absolute paths (selectors match on them, and a ledger is read from anywhere);
what is printed or written for people goes through :func:`shareable`.

>>> shareable("add (/w/m/model.py:10) reads mm (/w/m/model.py:8)", cwd="/w", model_dir="/w/m")
'add (m/model.py:10) reads mm (m/model.py:8)'
>>> shareable("at /elsewhere/m/model.py:3", cwd="/w", model_dir="/elsewhere/m")
'at model.py:3'
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# an absolute POSIX path, up to a space, quote, bracket, comma or the ``:line`` that follows it
_ABSOLUTE = re.compile(r"(?<![\w.~/-])/[^\s:'\"()\[\],;]+")


def _bases(cwd: str | Path | None, model_dir: str | Path | None) -> list[str]:
    found = [str(cwd if cwd is not None else os.getcwd()).rstrip("/")]
    if model_dir:
        found.append(str(model_dir).rstrip("/"))
    return [b for b in found if b]


def shareable(text: str, *, cwd: str | Path | None = None, model_dir: str | Path | None = None,
              hide_others: bool = False) -> str:
    """``text`` with an installed library's file relative to its package root
    (``transformers/models/qwen3/modeling_qwen3.py``, also when the venv is inside the working
    directory), and each other absolute path under the working directory (first) or the model's
    folder made relative to it; other paths are left as they are, or with
    ``hide_others`` (files that leave the machine: a repro README) shortened to ``…/<file name>``.

    >>> shareable("torch at /opt/venv/lib/torch/__init__.py", cwd="/w", hide_others=True)
    'torch at …/__init__.py'
    >>> shareable("/w/.venv/lib/python3.11/site-packages/transformers/x.py:3", cwd="/w")
    'transformers/x.py:3'
    """
    bases = _bases(cwd, model_dir)

    def one(match: re.Match[str]) -> str:
        path = match.group(0)
        if _INSTALLED.search(path):  # a library's file, even in a venv inside the working directory
            library = package_relative(path)
            if library is not None:
                return library
        for base in bases:
            if path.startswith(base + "/"):
                return path[len(base) + 1:]
        library = package_relative(path)
        if library is not None:
            return library
        if hide_others and path.count("/") > 1:
            return "…/" + path.rstrip("/").rsplit("/", 1)[-1]
        return path

    return _ABSOLUTE.sub(one, text)


_INSTALLED = re.compile(r"/(?:site|dist)-packages/")


def package_relative(path: str) -> str | None:
    """An installed library's file relative to its package root (the folder on ``sys.path`` that
    holds it), as a ``source:`` selector matches it; None for other paths.

    >>> package_relative("/venv/lib/python3.11/site-packages/transformers/models/qwen3/modeling_qwen3.py")
    'transformers/models/qwen3/modeling_qwen3.py'
    """
    parts = _INSTALLED.split(path)
    if len(parts) > 1 and parts[-1]:
        return parts[-1]
    import sys

    for root in sorted((p for p in sys.path if p and p.startswith("/") and "python" in p), key=len, reverse=True):
        if path.startswith(root.rstrip("/") + "/"):  # the standard library (lib/python3.X)
            return path[len(root.rstrip("/")) + 1:]
    return None


# the airctl package as frames name it (resolved, and as imported: a symlinked checkout gives both)
AIRCTL_PACKAGE = tuple({str(Path(__file__).resolve().parents[1]) + os.sep, str(Path(__file__).parents[1]) + os.sep})


def is_airctl_file(path: str) -> bool:
    """Whether ``path`` is one of airctl's own files (this install's, or an installed airctl's on another
    machine, as an imported log names it): never a line to show as the user's.

    >>> is_airctl_file("/venv/lib/python3.11/site-packages/airctl/sim/patched_torch_device_word.py")
    True
    """
    return path.startswith(AIRCTL_PACKAGE) or (package_relative(path) or "").startswith("airctl/")


def shareable_path(path: str | Path, *, cwd: str | Path | None = None, model_dir: str | Path | None = None) -> str:
    """One path, as :func:`shareable` writes it."""
    return shareable(str(path), cwd=cwd, model_dir=model_dir)

"""What made a run, and how a command given no model reuses it (the loop of docs/ledger.md "The current run").

Users loop — compile, apply a pass file, look at the GE graph, profile, edit the YAML, again — so
``airctl passes apply stream.yaml`` and ``airctl profile`` with no model take the model script,
entry, mode and pass file of the current run (:func:`run_origin`; the commands choose through
:func:`airctl.pipeline.source.choose_model`). A run
records its model script's path as given and resolved, and its SHA-256 (:func:`model_record`);
a script that moved is an error naming it, one that changed since is used as it is now, with a
warning saying so.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError, LedgerError, ModelScriptError
from airctl.ledger.reader import Ledger
from airctl.ledger.runs import resolve_run
from airctl.limits import MODEL_SCRIPT_BYTES
from airctl.modes import Mode
from airctl.safe_files import open_regular


def file_sha256(path: Path) -> str | None:
    """The SHA-256 of a model script; None when it cannot be a script (not a regular file, over
    :data:`~airctl.limits.MODEL_SCRIPT_BYTES`, unreadable): loading it says why."""
    digest = hashlib.sha256()
    try:
        with open_regular(path, error=ModelScriptError) as f:
            if os.fstat(f.fileno()).st_size > MODEL_SCRIPT_BYTES:
                return None
            while chunk := f.read(1 << 20):
                digest.update(chunk)
                if f.tell() > MODEL_SCRIPT_BYTES:
                    return None
    except (OSError, ModelScriptError):
        return None
    return digest.hexdigest()


def model_record(path: Path, entry: str | None) -> dict[str, Any]:
    """``index.json`` ``model`` of a compile: the path as given, resolved, its hash, the entry."""
    path = Path(path)
    return {"path": str(path), "resolved": str(path.resolve()), "sha256": file_sha256(path), "entry": entry}


@dataclass
class RunOrigin:
    """The model (and pass file, mode) of an earlier run, ready to compile again."""

    run: Path
    model: Path
    entry: str | None
    mode: Mode
    passes: Path | None
    warnings: list[str] = field(default_factory=list)
    world_size: int = 1  # a multi-rank run's ranks: a command that runs it again runs as many

    def describe(self) -> str:
        return f"{self.model.name} ({self.mode}, from run {self.run.name})"


def _existing(recorded: dict[str, Any], key_order: tuple[str, ...]) -> Path | None:
    for key in key_order:
        value = recorded.get(key)
        if isinstance(value, str) and value and Path(value).is_file():
            return Path(value)
    return None


FIRST_ARGUMENT = "MODEL.py as the first argument"  # how most commands take a model script (passes apply: --model)


def run_origin(out_dir: Path, run: str | Path | None = None, give: str = FIRST_ARGUMENT) -> RunOrigin:
    """The model script, entry, mode and pass file of ``run`` (default: the current run of ``out_dir``);
    ``give``: how the command takes a model script instead (its errors' hints say it)."""
    root = resolve_run(out_dir, run)
    index = Ledger.open(root).index
    model = index.model if isinstance(index.model, dict) else {}
    if index.command == "run" or not model.get("path"):
        raise LedgerError(f"run {root.name} did not compile a model script (command: {index.command})",
                          file=str(root / "index.json"),
                          hint=f"give the model script ({give}), or pick a compile run with --run ID")
    path = _existing(model, ("resolved", "path"))
    if path is None:
        raise ModelScriptError(
            f"the model script of run {root.name}, {model.get('path')}, no longer exists (moved or deleted)",
            file=str(model.get("resolved") or model.get("path")),
            hint=f"give it ({give}), or run `airctl compile` on it again")
    origin = RunOrigin(root, path, model.get("entry"), index.run_mode or Mode.MAX_AUTOTUNE, None,
                       world_size=index.world_size or 1)
    recorded = model.get("sha256")
    if recorded and file_sha256(path) != recorded:
        origin.warnings.append(f"{path} changed since run {root.name}: using the file as it is now")
    rank = (root / index.ranks[0].ledger).resolve() if index.ranks and index.ranks[0].ledger else None
    if not index.passes and rank is not None and rank.is_relative_to(root.resolve()):  # a multi-rank run's pass
        with contextlib.suppress(AirctlError):  # file is in its ranks' ledgers
            index = Ledger.open(rank).index
    if index.passes:
        passes = Path(index.passes)
        resolved = index.passes_resolved
        if not passes.is_file() and resolved and Path(resolved).is_file():
            passes = Path(resolved)
        origin.passes = passes if passes.is_file() else None
        if origin.passes is None:
            origin.warnings.append(f"the pass file of run {root.name}, {index.passes}, no longer exists: "
                                   "running without it")
    return origin

"""The output guard for commands that work on a run: its own inputs count as the command's.

``passes suggest -o`` and ``passes fix -o`` take a run (or a model script compiled into one); the
files that run was made from — its model script, its pass file — are inputs the written file must
never replace, as are the ledger and its folder of runs (:func:`airctl.io.output_path.claim_output`
refuses those, FIFOs and devices). Asked before any work, so a refusal costs nothing (exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from airctl.io.output_path import claim_output
from airctl.ledger.reader import Ledger
from airctl.ledger_files import is_ledger


def run_inputs(root: Path) -> list[Path]:
    """The files a ledger's run was made from: its model script and pass file(s), when named."""
    if not is_ledger(root):
        return []
    index = Ledger.open(root).index
    model = index.model if isinstance(index.model, dict) else {}
    named = [model.get("path"), index.passes, index.passes_resolved]
    return [Path(str(p)) for p in named if p]


def claim_run_output(out: Path | None, sources: Iterable[Path | str | None], option: str = "-o") -> Path | None:
    """``out`` when the command may write it (None stays None); the ledgers among ``sources`` add
    their own inputs. Raises AirctlError (exit 2) naming the path and why otherwise."""
    if out is None:
        return None
    inputs: list[Path | str | None] = []
    for src in sources:
        if src is None:
            continue
        inputs.append(src)
        inputs.extend(run_inputs(Path(src)))
    return claim_output(out, inputs, option=option)

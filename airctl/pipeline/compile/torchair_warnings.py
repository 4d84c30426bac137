"""TorchAir's Python warnings during a run: into the ledger, counted by kind, one line on the terminal.

TorchAir warns freely (its config in reduce-overhead mode, deprecations, converter modules it could
not import): dozens of two-line warnings on every transformers compile bury airctl's own output.
While :func:`kept_warnings` lasts, every warning raised from a file of the torch-npu wheel (TorchAir
lives in it; under sim it is imported from there too) is recorded — each one, not only the first per
location — and not printed; other warnings are left to the filters in force. At the end
the ledger gets ``torchair_warnings`` in ``index.json``: the count, the count per kind (category and
TorchAir's ``file:line``) and each distinct message with its count. ``verbose`` (``airctl
compile -v``, or ``AIRCTL_VERBOSE=1``) prints TorchAir's warnings as they come as well.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

VERBOSE_ENV = "AIRCTL_VERBOSE"
_MAX_MESSAGES = 200  # distinct messages kept in index.json (the count covers all)


def _wheel_dirs() -> tuple[str, ...]:
    """Where TorchAir's files are: the torch-npu wheel (found without importing it)."""
    import importlib.util

    dirs = set()
    for name in ("torch_npu", "torchair"):
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if file:
            dirs.update({str(Path(file).parent), str(Path(file).resolve().parent)})
    if not dirs:
        spec = importlib.util.find_spec("torch_npu")
        if spec is not None and spec.submodule_search_locations:
            found = Path(list(spec.submodule_search_locations)[0])
            dirs.update({str(found), str(found.resolve())})
    return tuple(d + os.sep for d in dirs)


class TorchAirWarnings:
    """Every TorchAir warning of a run: ``kinds`` counts ``"Category at file:line"``, ``messages`` the texts."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.messages: Counter[str] = Counter()

    @property
    def count(self) -> int:
        return sum(self.kinds.values())

    def add(self, message: Any, category: type[Warning], filename: str, lineno: int) -> None:
        where = f"{Path(filename).name}:{lineno}"
        self.kinds[f"{category.__name__} at {where}"] += 1
        self.messages[f"{category.__name__}: {str(message).strip()}"] += 1

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "by_kind": dict(self.kinds.most_common()),
                "messages": [{"message": m, "count": n} for m, n in self.messages.most_common(_MAX_MESSAGES)]}


@contextmanager
def kept_warnings(ledger: Any = None, verbose: bool = False) -> Iterator[TorchAirWarnings]:
    """Record TorchAir's warnings while the block runs; then ``ledger.set(torchair_warnings=...)`` if any.
    ``verbose`` (or ``AIRCTL_VERBOSE=1``): printed as well."""
    kept = TorchAirWarnings()
    dirs = _wheel_dirs()
    verbose = verbose or os.environ.get(VERBOSE_ENV, "") not in ("", "0")
    with warnings.catch_warnings():
        warnings.filterwarnings("always", module=r"(torchair|torch_npu)(\.|$)")  # each one, to count it
        shown = warnings.showwarning

        def show(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
                 line: str | None = None) -> None:
            if dirs and (filename.startswith(dirs) or os.path.realpath(filename).startswith(dirs)):
                kept.add(message, category, filename, lineno)
                if not verbose:
                    return
            shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        try:
            yield kept
        finally:
            if ledger is not None and kept.count:
                ledger.set(torchair_warnings=kept.to_json())

"""What kind of file a command's SOURCE is: a ``.py`` model script or a TorchAir py dump / FX code, a
torch_npu profiler folder (:mod:`airctl.pipeline.source` resolves every SOURCE with these).

``airctl dump`` and ``airctl diff`` accept the same sources:

- a graph file: TorchAir ``.pbtxt``/``.txt``/``.py`` dump or airctl ``.json`` (:func:`read_graph`);
- a ledger folder (has ``index.json``, see docs/ledger.md): a stage picked by name or index, read
  through :class:`airctl.ledger.reader.Ledger`; without one, the request's default stage
  (:func:`airctl.ledger.defaults.default_stage`, the table in docs/ledger.md);
- a ``.py`` *model script* (told apart from a TorchAir py dump by content, :func:`is_model_script`)
  is not a graph: :mod:`airctl.pipeline.source` compiles it first, then reads the ledger.
"""

from __future__ import annotations

from pathlib import Path

from airctl.errors import GraphReadError
from airctl.io.compressed import read_head
from airctl.io.py_dump import is_torchair_py_dump


def is_model_script(path: Path | str) -> bool:
    """A ``.py`` file that is not a TorchAir py dump (GE calls, or FX code): a model script, to be compiled first."""
    path = Path(path)
    return path.suffix == ".py" and path.is_file() and not _py_dump(path)


def _py_dump(path: Path) -> bool:
    try:
        text = read_head(path)  # as read_graph tells a .py dump: by its head, not a whole 16 MB script
    except (OSError, GraphReadError):
        return True  # let read_graph report the error with its usual wording
    from airctl.io.fx_code import is_fx_code

    return is_torchair_py_dump(text) or is_fx_code(text)


def is_profiler_folder(path: Path) -> bool:
    """Whether ``path`` is (or holds, one or two levels down) a torch_npu profiler output."""
    path = Path(path)
    if not path.is_dir():
        return False
    if path.name.endswith("_ascend_pt") or (path / "ASCEND_PROFILER_OUTPUT").is_dir():
        return True
    for depth in ("*_ascend_pt", "*/*_ascend_pt"):
        if next(iter(path.glob(depth)), None) is not None:
            return True
    return False

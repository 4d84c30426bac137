"""Load a user's model script and find the model and example inputs in it.

Conventions, tried in order (design.md "Model scripts"):

1. ``--entry NAME``: ``NAME()`` returns ``(model, inputs)``, or a model whose inputs come from
   ``get_inputs()``/``example_inputs()``/``inputs``; ``--entry MODEL_FN,INPUTS_FN`` names both.
2. ``get_model()`` + ``get_inputs()`` (also ``make_model``/``build_model`` + ``example_inputs``).
3. module-level ``model`` + ``inputs`` (or ``example_inputs``).

Optionally ``step(model, *inputs)``: what one run does with the (compiled) model — e.g. a
forward, a loss and ``loss.backward()``, returning what should match eager. Without it a run is
``model(*inputs)``. Inputs may be a tensor, a tuple/list (positional) or a dict (keyword).

The script runs like ``python script.py`` would import it: its folder on ``sys.path``,
``__name__`` set to a private module name (so an ``if __name__ == "__main__"`` block does not
run), the npu device word mapped by the active backend.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl.errors import ModelScriptError, UserCodeError
from airctl.limits import MODEL_SCRIPT_BYTES
from airctl.pipeline.run.boundary import reopen_std_streams
from airctl.safe_files import open_regular, read_regular, too_large

MODEL_FNS = ("get_model", "make_model", "build_model", "create_model")
INPUT_FNS = ("get_inputs", "example_inputs", "make_inputs", "get_example_inputs")
MODEL_VARS = ("model",)
INPUT_VARS = ("inputs", "example_inputs", "x")


@dataclass
class LoadedModel:
    path: Path
    module: Any
    model: Any
    inputs: Any
    step: Callable[..., Any] | None
    found_by: str

    def call(self, model: Any) -> Any:
        args, kwargs = split_inputs(self.inputs)
        if self.step is not None:
            return self.step(model, *args, **kwargs)
        return model(*args, **kwargs)


def split_inputs(inputs: Any) -> tuple[tuple, dict]:
    if isinstance(inputs, dict):
        return (), dict(inputs)
    if isinstance(inputs, (list, tuple)):
        return tuple(inputs), {}
    return (inputs,), {}


def _is_users(filename: str, folder: Path) -> bool:
    """A frame of the user's own code: under the script's folder, and not airctl's, torch's or a library's."""
    p = Path(filename)
    if not p.is_absolute() or "site-packages" in p.parts or "dist-packages" in p.parts:
        return False
    try:
        p.resolve().relative_to(folder)
    except ValueError:
        return False
    return Path(__file__).resolve().parents[2] not in p.resolve().parents


def user_frames(exc: BaseException, path: Path) -> list[traceback.FrameSummary]:
    folder = path.resolve().parent
    return [f for f in traceback.extract_tb(exc.__traceback__) if _is_users(f.filename, folder)]


def user_traceback(exc: BaseException, path: Path) -> str:
    """The traceback limited to frames of the user's code (the script and its folder; fallback: all)."""
    frames = user_frames(exc, path)
    lines = traceback.format_list(frames) if frames else traceback.format_tb(exc.__traceback__)
    return "".join(lines) + "".join(traceback.format_exception_only(type(exc), exc))


def user_code_error(exc: BaseException, path: Path, what: str) -> UserCodeError:
    """``what`` (``get_model()``, ``the model's forward``...) of the user's script raised or exited."""
    frames = user_frames(exc, path)
    where = frames[-1] if frames else None
    if isinstance(exc, SystemExit):
        message = f"{what} called sys.exit({exc.code!r})"
    else:
        message = f"{what} raised {type(exc).__name__}: {exc}".splitlines()[0]
    return UserCodeError(message, file=where.filename if where else str(path), line=where.lineno if where else None,
                         hint="the error is in your script, not in TorchAir or airctl; traceback from your code:\n"
                              + user_traceback(exc, path))


def check_script(path: Path) -> None:
    """ModelScriptError unless ``path`` can be a model script: it exists, is a regular file (a FIFO
    or ``/dev/zero`` would block or never end) of at most :data:`~airctl.limits.MODEL_SCRIPT_BYTES`,
    and is a ``.py`` file. Checked without reading it."""
    if not path.exists():
        raise ModelScriptError("model script not found", file=str(path),
                               hint="check the path; airctl compile takes a Python file defining the model")
    with open_regular(path, error=ModelScriptError,
                      hint="a model script is a Python file; give its path") as f:
        if os.fstat(f.fileno()).st_size > MODEL_SCRIPT_BYTES:
            raise too_large(path, MODEL_SCRIPT_BYTES, "model script", ModelScriptError,
                            hint="a model script is Python source; load big weights from a file it names")
    if path.suffix != ".py":
        raise ModelScriptError("model script must be a .py file", file=str(path))


def script_source(path: Path) -> bytes:
    """The script's bytes, read as a regular file within :data:`~airctl.limits.MODEL_SCRIPT_BYTES`:
    what airctl runs, parses or copies of a script is what one checked read gave."""
    return read_regular(path, MODEL_SCRIPT_BYTES, error=ModelScriptError, what="model script",
                        hint="a model script is a Python file; give its path")


class _CheckedSource(importlib.machinery.SourceFileLoader):
    """The script's loader: it runs the bytes read from the descriptor that was checked to be a regular
    file within the limit, not whatever the path names when Python opens it again (a file swapped in
    between), and writes no ``__pycache__`` into the user's folder."""

    def __init__(self, fullname: str, path: str, source: bytes) -> None:
        super().__init__(fullname, path)
        self.source = source

    def get_code(self, fullname: str) -> Any:
        return compile(self.source, self.path, "exec", dont_inherit=True)


def ran_from(module: Any) -> bytes | None:
    """The bytes a model script's module ran from (its checked loader keeps them); None for another module."""
    loader = getattr(getattr(module, "__spec__", None), "loader", None)
    return loader.source if isinstance(loader, _CheckedSource) else None


def import_script(path: Path) -> Any:
    check_script(path)
    source = script_source(path)
    module_name = f"airctl_model_{abs(hash(str(path.resolve())))}"
    location = str(path.absolute())  # as Python names a file it imports (.. kept): tracebacks name the user's frames
    spec = importlib.util.spec_from_file_location(module_name, location,
                                                  loader=_CheckedSource(module_name, location, source))
    if spec is None or spec.loader is None:
        raise ModelScriptError("cannot load as a Python module", file=str(path))
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise ModelScriptError(f"syntax error: {e.msg}", file=str(path), line=e.lineno, column=e.offset) from e
    except (Exception, SystemExit) as e:
        raise user_code_error(e, path, "importing the script") from e
    return module


def _call(module: Any, name: str, path: Path) -> Any:
    fn = getattr(module, name)
    if not callable(fn):
        return fn
    try:
        return fn()
    except (Exception, SystemExit) as e:
        raise user_code_error(e, path, f"{name}()") from e


def _first(module: Any, names: tuple[str, ...]) -> str | None:
    return next((n for n in names if hasattr(module, n)), None)


def _inputs_of(module: Any, path: Path) -> tuple[Any, str] | None:
    fn = _first(module, INPUT_FNS)
    if fn is not None:
        return _call(module, fn, path), f"{fn}()"
    var = _first(module, INPUT_VARS)
    if var is not None:
        return getattr(module, var), var
    return None


def find_model(module: Any, path: Path, entry: str | None = None) -> LoadedModel:
    step = getattr(module, "step", None)
    step = step if callable(step) else None
    looked_for = []
    if entry:
        names = [n.strip() for n in entry.split(",") if n.strip()]
        for n in names:
            if not hasattr(module, n):
                candidates = sorted(k for k in vars(module) if not k.startswith("_") and callable(getattr(module, k)))
                raise ModelScriptError(f"--entry {n}: no such name in the script", file=str(path),
                                       hint="callables defined there: " + (", ".join(candidates) or "none"))
        result = _call(module, names[0], path)
        if len(names) > 1:
            return LoadedModel(path, module, result, _call(module, names[1], path), step, f"--entry {entry}")
        if isinstance(result, tuple) and len(result) == 2:
            return LoadedModel(path, module, result[0], result[1], step, f"--entry {entry}")
        found = _inputs_of(module, path)
        if found is None:
            raise ModelScriptError(f"--entry {entry} returned a model but no inputs were found", file=str(path),
                                   hint="return (model, inputs) from it, or define get_inputs()")
        return LoadedModel(path, module, result, found[0], step, f"--entry {entry} + {found[1]}")
    fn = _first(module, MODEL_FNS)
    looked_for.append(" / ".join(f"{n}()" for n in MODEL_FNS))
    if fn is not None:
        model = _call(module, fn, path)
        if isinstance(model, tuple) and len(model) == 2:
            return LoadedModel(path, module, model[0], model[1], step, f"{fn}()")
        found = _inputs_of(module, path)
        if found is not None:
            return LoadedModel(path, module, model, found[0], step, f"{fn}() + {found[1]}")
    var = _first(module, MODEL_VARS)
    looked_for.append("module-level `model`")
    if var is not None:
        found = _inputs_of(module, path)
        if found is not None:
            return LoadedModel(path, module, getattr(module, var), found[0], step, f"{var} + {found[1]}")
    input_vars = "` / `".join(INPUT_VARS)
    looked_for.append("inputs from " + " / ".join(f"{n}()" for n in INPUT_FNS) + f" or `{input_vars}`")
    raise ModelScriptError(
        "no model and example inputs found in the script",
        file=str(path),
        hint="looked for " + "; ".join(looked_for) + ". Define get_model() and get_inputs(), or pass --entry NAME",
    )


def load_model_script(path: Path | str, entry: str | None = None) -> LoadedModel:
    path = Path(path)
    module = import_script(path)
    loaded = find_model(module, path, entry)
    reopen_std_streams()  # closed by the script: the compile that follows logs and prints
    if not callable(loaded.model):
        raise ModelScriptError(f"{loaded.found_by} gave a {type(loaded.model).__name__}, not a model",
                               file=str(path),
                               hint="return an nn.Module (or a function of the inputs) from get_model()")
    return loaded

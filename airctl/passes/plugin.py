"""``kind: python`` passes: load ``path/to/file.py:function`` and check what it is.

The file is looked up relative to the YAML file, then the working folder, and imported under a
private module name (it is user code, like any model script). Every way this can go wrong is a
:class:`~airctl.errors.SpecError` at the ``plugin:`` line of the YAML file, raised when the hooks
are built — before anything compiles: missing file, the file raising on import (with its
traceback), no such function (with the closest names), not callable.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import sys
import traceback
from pathlib import Path
from typing import Any

from airctl.errors import SpecError
from airctl.passes import time_limit
from airctl.passes.spec import PassSpec


def user_traceback(exc: BaseException, file: str | None = None) -> tuple[str, int | None]:
    """The user's part of a traceback (frames from ``file`` onwards, else all), and the failing line there."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != time_limit.__file__]
    line = None
    start = 0
    if file is not None:
        target = str(Path(file).resolve())
        mine = [i for i, f in enumerate(frames) if str(Path(f.filename).resolve()) == target]
        if mine:
            start = mine[0]
            line = frames[mine[-1]].lineno
    text = "".join(traceback.format_list(frames[start:])) + "".join(traceback.format_exception_only(type(exc), exc))
    return text.rstrip(), line


def resolve_plugin_path(spec: PassSpec, base_dir: Path | None) -> tuple[Path, str]:
    text = str(spec.fields["plugin"])
    line, col = spec.marks.get("plugin", (spec.line, spec.column))
    file_part, sep, func = text.rpartition(":")
    if not sep or not file_part or not func.isidentifier():
        raise SpecError(f"`plugin` must be path/to/file.py:function, got {text!r}", file=spec.file, line=line,
                        column=col)
    tried = []
    for root in ([base_dir] if base_dir else []) + [Path.cwd()]:
        candidate = (root / file_part) if not Path(file_part).is_absolute() else Path(file_part)
        tried.append(str(candidate))
        if candidate.is_file():
            return candidate.resolve(), func
    raise SpecError(f"plugin file not found: {file_part}", file=spec.file, line=line, column=col,
                    hint="looked for: " + ", ".join(dict.fromkeys(tried)))


def load_plugin(spec: PassSpec, base_dir: Path | None) -> Any:
    path, func = resolve_plugin_path(spec, base_dir)
    line, col = spec.marks.get("plugin", (spec.line, spec.column))
    digest = hashlib.blake2b(str(path).encode(), digest_size=4).hexdigest()
    mod_name = f"airctl_plugin_{path.stem}_{digest}"
    module = sys.modules.get(mod_name)
    if module is None:
        from airctl.torch_env import ensure_torch_importable

        ensure_torch_importable()  # plugins `import torch` at their top; torch-npu's autoload must not break it
        import_spec = importlib.util.spec_from_file_location(mod_name, path)
        if import_spec is None or import_spec.loader is None:
            raise SpecError(f"cannot import plugin file {path}", file=spec.file, line=line, column=col)
        module = importlib.util.module_from_spec(import_spec)
        sys.modules[mod_name] = module
        try:
            import_spec.loader.exec_module(module)
        except BaseException as e:  # noqa: BLE001 - user code: report, never crash
            del sys.modules[mod_name]
            text, where = user_traceback(e, str(path))
            raise SpecError(f"plugin {path.name} raised while importing: {type(e).__name__}: {e}\n{text}",
                            file=spec.file, line=line, column=col,
                            hint=f"fix {path}" + (f" line {where}" if where else "")) from e
    fn = getattr(module, func, None)
    if fn is None:
        names = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_") or n == func]
        guess = difflib.get_close_matches(func, names, n=3, cutoff=0.5)
        raise SpecError(f"plugin {path.name} has no function `{func}`", file=spec.file, line=line, column=col,
                        hint=(f"did you mean {', '.join(guess)}? " if guess else "")
                        + "functions: " + ", ".join(sorted(n for n in names if not n[0].isupper())[:10]))
    if not callable(fn):
        raise SpecError(f"plugin {path.name}: `{func}` is not callable", file=spec.file, line=line, column=col)
    fn.airctl_plugin_file = str(path)  # type: ignore[attr-defined]
    return fn

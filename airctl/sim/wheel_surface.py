"""What the installed torch-npu wheel exposes from outside, read from its files without importing it.

Libraries that probe for ``torch_npu`` (transformers, accelerate, vllm-ascend-style plugins)
import names from it (``from torch_npu import npu_fusion_attention``) and call functions of
``torch.npu`` (``device_count``, ``mem_get_info``, ``amp``). The real package builds those names at
import time: every ``torch.ops.npu`` op becomes ``torch_npu.<op>`` (``torch_npu/_init/core/
_exports.py``), and ``torch_npu.npu`` lists its functions in ``__all__``. Importing it needs CANN, so
the sim stand-in learns the same surface statically, from:

- the ``custom:`` sections of ``csrc/aten/npu_native_functions*.yaml`` (the ops the C++ extension
  registers in the ``npu`` namespace, with their schemas), and the literal
  ``torch.library.Library("npu", ...).define("...")`` calls in the wheel's Python files;
- the ``__all__`` lists of ``torch_npu/__init__.py`` and ``torch_npu/npu/__init__.py``, the keys of
  ``_LAZY_PYTHON_SYMBOLS`` in ``_exports.py``, and ``public_npu_functions`` (``utils/exposed_api.py``).

The result is cached per process (the yaml is ~1 MB; read once it costs nothing).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

_YAMLS = ("csrc/aten/npu_native_functions_by_codegen.yaml", "csrc/aten/npu_native_functions.yaml")
_FUNC = re.compile(r"^\s*-?\s*func:\s*(.+?)\s*$")
_SECTION = re.compile(r"^([A-Za-z_]+):")
_DEFINE = re.compile(r"""\.define\(\s*(["'])(.+?)\1""")
_OP_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z0-9_]+)?\(")


@dataclass(frozen=True)
class WheelSurface:
    """The names the wheel makes importable, each set sorted for stable output."""

    root: Path | None
    npu_ops: dict[str, tuple[str, ...]]  # op name -> its schemas (one per overload), as the wheel spells them
    public_ops: frozenset[str]  # torch_npu.utils.exposed_api.public_npu_functions (the documented ones)
    top_all: frozenset[str]  # torch_npu.__all__ before the exports, and the lazily imported Python APIs
    npu_all: frozenset[str]  # torch_npu.npu.__all__

    def top_level(self) -> frozenset[str]:
        """Every name ``torch_npu.<name>`` the wheel's exports make (ops, ``__all__``, lazy APIs)."""
        return frozenset(self.npu_ops) | self.top_all


def _module_assignments(path: Path) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` assignments of a Python file (values that are not literals skipped)."""
    if not path.is_file():
        return {}
    out: dict[str, object] = {}
    for node in ast.parse(path.read_text(encoding="utf-8", errors="replace")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return out


def _yaml_custom_ops(path: Path) -> dict[str, list[str]]:
    """``func:`` schemas under the ``custom:`` top-level key (the ``npu`` namespace) of a native-functions yaml."""
    ops: dict[str, list[str]] = {}
    if not path.is_file():
        return ops
    section = ""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        top = _SECTION.match(line)
        if top:
            section = top.group(1)
            continue
        if section != "custom":
            continue
        func = _FUNC.match(line)
        name = _OP_NAME.match(func.group(1)) if func else None
        if func and name:
            ops.setdefault(name.group(1), []).append(func.group(1))
    return ops


def _python_defined_ops(root: Path) -> dict[str, list[str]]:
    """Schemas of literal ``<lib>.define("...")`` calls in files that open a ``Library("npu", ...)``
    (a text scan: parsing the wheel's largest files with ``ast`` costs most of a second)."""
    ops: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        if b'Library("npu"' not in data and b"Library('npu'" not in data:
            continue
        for match in _DEFINE.finditer(data.decode("utf-8", errors="replace")):
            name = _OP_NAME.match(match.group(2))
            if name:
                ops.setdefault(name.group(1), []).append(match.group(2))
    return ops


def read_surface(root: Path | None) -> WheelSurface:
    """The surface of the wheel whose package folder is ``root`` (None: an empty surface)."""
    if root is None:
        return WheelSurface(None, {}, frozenset(), frozenset(), frozenset())
    ops: dict[str, list[str]] = {}
    for found in [*(_yaml_custom_ops(root / y) for y in _YAMLS), _python_defined_ops(root)]:
        for name, schemas in found.items():
            known = ops.setdefault(name, [])
            known.extend(s for s in schemas if s not in known)
    exports = _module_assignments(root / "_init" / "core" / "_exports.py")
    lazy = exports.get("_LAZY_PYTHON_SYMBOLS", {})
    top_all = set(_module_assignments(root / "__init__.py").get("__all__", []))
    top_all |= set(lazy) if isinstance(lazy, dict) else set()
    public = _module_assignments(root / "utils" / "exposed_api.py").get("public_npu_functions", [])
    npu_all = _module_assignments(root / "npu" / "__init__.py").get("__all__", [])
    return WheelSurface(root, {k: tuple(v) for k, v in sorted(ops.items())}, frozenset(public),
                        frozenset(top_all), frozenset(npu_all))


@functools.lru_cache(maxsize=4)
def _cached(root: str | None) -> WheelSurface:
    return read_surface(Path(root) if root else None)


def installed_surface() -> WheelSurface:
    """The surface of the installed torch-npu wheel (found without importing it; cached)."""
    from airctl.sim.torchair_loader import torch_npu_root

    root = torch_npu_root()
    return _cached(str(root) if root else None)

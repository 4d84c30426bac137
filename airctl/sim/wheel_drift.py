"""What the installed TorchAir and npugraph_ex offer a user, enumerated from the wheel's files.

A wheel bump adds config fields, scope functions, GE options and Dynamo guards that change what
users do, and airctl must either model each or say why it does not. This module lists them, read
statically with :mod:`ast` (no import: the real package needs CANN), so that a test can compare
the list with :data:`airctl.sim.wheel_drift_table.DRIFT_TABLE` and name every item that is new:

- ``torchair.config:<dotted path>`` and ``npugraph_ex.config:<dotted path>``: every leaf option of
  ``CompilerConfig`` (an ``self.x = ...Value(...)`` assignment, followed through nested configs such
  as ``self.ge_config = _GEConfig()``), as ``--option`` spells it;
- ``torchair.scope:<name>`` and ``npugraph_ex.scope:<name>``: the public functions of the ``scope``
  packages (``npu_stream_switch``, ``deterministic``, ...);
- ``ge_option:<key>``: every ``ge.*`` option key TorchAir's configs can emit, and the keys of its
  compile/execute option whitelists (``COMPILE_OPTIONS_WHITELIST``, ``EXECUTE_OPTIONS_WHITELIST``);
- ``dynamo_guard:<function>``: functions of ``torch_npu/dynamo`` and of the two ``npu_fx_compiler``
  modules that install a Dynamo guard (they call ``add_lambda_guard`` or ``make_guard``).

>>> sorted(i for i in wheel_items() if i.startswith("torchair.scope:"))[:2]   # doctest: +SKIP
['torchair.scope:data_dump', 'torchair.scope:deterministic']
"""

from __future__ import annotations

import ast
import functools
import re
import warnings
from pathlib import Path

_GE_KEY = re.compile(r"^ge\.[A-Za-z_][A-Za-z0-9_.]*$")
_GUARD_CALLS = ("add_lambda_guard", "make_guard")
_WHITELISTS = ("COMPILE_OPTIONS_WHITELIST", "EXECUTE_OPTIONS_WHITELIST")


def _parse(path: Path) -> ast.Module | None:
    try:
        with warnings.catch_warnings():  # the wheel's own invalid escape sequences are its business
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            return ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError):
        return None


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute):
            return func.attr
    return None


class _Configs:
    """The config classes of one ``configs`` folder: class name -> its ``self.x = Call()`` fields."""

    def __init__(self, folder: Path) -> None:
        self.fields: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (file stem, class) -> [(attr, call)]
        self.imports: dict[tuple[str, str], str] = {}  # (file stem, name) -> file stem defining it
        for path in sorted(folder.glob("*.py")):
            tree = _parse(path)
            if tree is None:
                continue
            for node in tree.body:
                if isinstance(node, ast.ImportFrom) and node.module:
                    for alias in node.names:
                        self.imports[(path.stem, alias.asname or alias.name)] = node.module.rsplit(".", 1)[-1]
                if isinstance(node, ast.ClassDef):
                    self.fields[(path.stem, node.name)] = self._class_fields(node)

    @staticmethod
    def _class_fields(cls: ast.ClassDef) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for fn in cls.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "__init__"):
                continue
            for stmt in ast.walk(fn):
                if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                    continue
                target = stmt.targets[0]
                call = _call_name(stmt.value)
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == "self" and call is not None):
                    out.append((target.attr, call))
        return out

    def _resolve(self, stem: str, name: str) -> tuple[str, str] | None:
        if (stem, name) in self.fields:
            return stem, name
        other = self.imports.get((stem, name))
        if other is not None and (other, name) in self.fields:
            return other, name
        return None

    def leaves(self, stem: str, cls: str, prefix: str = "", depth: int = 0) -> list[str]:
        """Dotted paths of the leaf options under class ``cls`` of file ``stem``."""
        out: list[str] = []
        for attr, call in self.fields.get((stem, cls), []):
            if call.endswith("Value") or call.endswith("FileAddr"):
                out.append(prefix + attr)
                continue
            nested = self._resolve(stem, call)
            if nested is not None and depth < 8:
                out.extend(self.leaves(*nested, prefix=f"{prefix}{attr}.", depth=depth + 1))
        return out


def config_fields(configs_dir: Path) -> list[str]:
    """Leaf options of ``CompilerConfig`` in a ``configs`` folder (``compiler_config.py``)."""
    if not (configs_dir / "compiler_config.py").is_file():
        return []
    return sorted(_Configs(configs_dir).leaves("compiler_config", "CompilerConfig"))


def scope_functions(scope_init: Path) -> list[str]:
    """Public module-level functions of a ``scope/__init__.py``."""
    tree = _parse(scope_init) if scope_init.is_file() else None
    if tree is None:
        return []
    return sorted(n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_"))


def ge_options(torchair_dir: Path) -> list[str]:
    """``ge.*`` keys TorchAir's configs emit, and its compile/execute option whitelists."""
    keys: set[str] = set()
    for path in sorted((torchair_dir / "configs").glob("*.py")):
        tree = _parse(path)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _GE_KEY.match(node.value):
                keys.add(node.value)
    converter = _parse(torchair_dir / "_ge_concrete_graph" / "fx2ge_converter.py")
    for node in converter.body if converter is not None else ():
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in _WHITELISTS and isinstance(node.value, (ast.List, ast.Tuple))):
            keys.update(e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return sorted(keys)


def dynamo_guards(dynamo_dir: Path) -> list[str]:
    """Functions that install a Dynamo guard, in ``torch_npu/dynamo/*.py`` and the ``npu_fx_compiler``s."""
    files = sorted(dynamo_dir.glob("*.py"))
    files += [dynamo_dir / pkg / "npu_fx_compiler.py" for pkg in ("torchair", "npugraph_ex")]
    names: set[str] = set()
    for path in files:
        tree = _parse(path) if path.is_file() else None
        for fn in ast.walk(tree) if tree is not None else ():
            if isinstance(fn, ast.FunctionDef) and fn.name != "_create_guard_fn" and any(
                    _call_name(c) in _GUARD_CALLS for c in ast.walk(fn)):
                names.add(fn.name)
    return sorted(names)


@functools.lru_cache(maxsize=4)
def wheel_items(torch_npu_root: Path | None = None) -> frozenset[str]:
    """Every item of the installed wheel (or of the ``torch_npu`` folder given), as ``kind:name``."""
    root = torch_npu_root if torch_npu_root is not None else _installed_root()
    dynamo = root / "dynamo"
    torchair, npugraph_ex = dynamo / "torchair", dynamo / "npugraph_ex"
    items = {f"torchair.config:{f}" for f in config_fields(torchair / "configs")}
    items |= {f"npugraph_ex.config:{f}" for f in config_fields(npugraph_ex / "configs")}
    items |= {f"torchair.scope:{f}" for f in scope_functions(torchair / "scope" / "__init__.py")}
    items |= {f"npugraph_ex.scope:{f}" for f in scope_functions(npugraph_ex / "scope" / "__init__.py")}
    items |= {f"ge_option:{k}" for k in ge_options(torchair)}
    items |= {f"dynamo_guard:{g}" for g in dynamo_guards(dynamo)}
    return frozenset(items)


def _installed_root() -> Path:
    from airctl.sim.torchair_loader import torchair_dir

    return torchair_dir().parent.parent


def unlisted(items: frozenset[str], table: dict[str, tuple[str, str]]) -> list[str]:
    """Items of the wheel the table neither models nor ignores with a reason."""
    return sorted(i for i in items if i not in table or not table[i][1].strip())

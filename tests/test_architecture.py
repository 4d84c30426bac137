"""The architecture's rules that a linter does not check: no hidden process state, no module or test
helper over 300 lines of logic, and the examples in module docstrings still print what they say
(docs/architecture.md)."""

from __future__ import annotations

import ast
import doctest
import importlib
import io
import tempfile
import tokenize
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "airctl"
# where module-level mutable state is forbidden; sim/registry.py is the one documented registry, and
# pipeline/run/signals.py holds the process's signal dispositions (the OS keeps them per process)
STATELESS = ("sim", "execute", "pipeline")
REGISTRIES = (PACKAGE / "sim" / "registry.py", PACKAGE / "pipeline" / "run" / "signals.py")
MUTABLE_CALLS = {"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "local", "count", "Lock", "RLock",
                 "WeakKeyDictionary", "WeakValueDictionary", "WeakSet", "Queue", "SimpleQueue", "Counter"}


def _module_state(path: Path) -> list[str]:
    """Module-level names bound to mutable containers or objects, and ``global`` statements."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text)
    found = [f"{path.name}:{node.lineno}: global {', '.join(node.names)}"
             for node in ast.walk(tree) if isinstance(node, ast.Global)]
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        names = [ast.unparse(t) for t in targets]
        if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
            mutable = not all(n.isupper() or n == "__all__" for n in names)  # UPPER_CASE tables are constants
        elif isinstance(value, ast.Call):
            func = value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            mutable = name in MUTABLE_CALLS or name[:1].isupper() and not name.isupper()  # an instance of a class
        else:
            mutable = False
        if mutable and "# constant:" not in lines[node.lineno - 1]:  # a documented exception, on its line
            where = path.relative_to(PACKAGE) if path.is_relative_to(PACKAGE) else path.name
            found.append(f"{where}:{node.lineno}: {', '.join(names)} = {ast.unparse(value)[:60]}")
    return found


def test_no_module_level_mutable_state_outside_the_registry() -> None:
    offenders = [row for pkg in STATELESS for path in sorted((PACKAGE / pkg).rglob("*.py")) if path not in REGISTRIES
                 for row in _module_state(path)]
    assert offenders == [], "module-level state belongs in a context passed down (or in sim/registry.py):\n" + \
        "\n".join(offenders)


def test_the_state_check_catches_what_it_is_for(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import threading\n_active: list = []\nSETTINGS = Settings()\n_tls = threading.local()\n"
                   "MODES = ('a', 'b')\nDEFAULT = 1.0\nTABLE = {'a': 1}\nNONE = Stream(0)  # constant: never changed\n"
                   "\ndef f():\n    global X\n", encoding="utf-8")
    rows = _module_state(bad)
    assert [r.split(": ", 1)[1].split(" =")[0] for r in rows] == ["global X", "_active", "SETTINGS", "_tls"]


MAX_LOGIC_LINES = 300  # docs/architecture.md "Conventions"; /work/shared/style.md §2


def logic_lines(text: str) -> int:
    """Lines holding code: not blank, not only a comment, not part of a docstring (a module's, a class's,
    a function's)."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                docstrings.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in skip:
            lines.update(n for n in range(token.start[0], token.end[0] + 1) if n not in docstrings)
    return len(lines)


def test_no_module_or_test_helper_over_300_lines_of_logic() -> None:
    sizes = {path.relative_to(REPO): logic_lines(path.read_text(encoding="utf-8"))
             for root in (PACKAGE, REPO / "tests") for path in sorted(root.rglob("*.py"))}
    over = [f"{path}: {n}" for path, n in sorted(sizes.items(), key=lambda row: -row[1]) if n > MAX_LOGIC_LINES]
    assert over == [], "a module does one job; split these by what their parts do:\n" + "\n".join(over)


def test_logic_lines_leave_out_blanks_comments_and_docstrings() -> None:
    text = ('"""Module.\n\nMore."""\n\nimport os  # why\n\n\n'
            'def f(\n    x,\n):\n    """Doc."""\n    # a comment\n    return x\n')
    assert logic_lines(text) == 5  # import, the def's three lines, return


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if ">>> " in text:
            rel = path.relative_to(REPO).with_suffix("")
            names.append(".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts))
    return names


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples_print_what_they_say(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module(name)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the examples' mkdtemp() folders: pytest's to remove
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} fail (run python -m doctest)"

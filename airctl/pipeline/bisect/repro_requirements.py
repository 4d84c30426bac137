"""What a reproducer needs installed beyond torch: the model's outside modules, pinned, and checked.

A model built with a library (transformers, say) needs it where the reproducer runs: the script
imports it, and a graph-form ``model.py`` calls the custom ops it registers
(``torch.ops.transformers.grouped_mm_fallback``) and must import it first. This module finds those
modules — the script's own top-level imports and the namespaces of the custom ops in its Dynamo
graphs — with the distributions and versions installed here, and writes:

- ``requirements.txt``: the bundle's own pins (torch, torch-npu, safetensors and the model's modules),
  so ``pip install -r requirements.txt`` in a fresh virtual environment is enough (with airctl);
- the graph form's imports of the modules that register those ops (``import transformers.integrations.moe``:
  importing the package alone does not register them);
- ``run.sh``'s first step (:data:`CHECK_SH`): each pinned module imports, or it says what to install
  and exits 2 (a version that differs is said, and the run goes on).
"""

from __future__ import annotations

import ast
import importlib.metadata
import sys
from pathlib import Path
from typing import Any

from airctl.torch_env import installed_version

# namespaces torch and the Ascend stack define ops in: never a module to install for the model
_TORCH_NAMESPACES = {"aten", "prims", "prim", "_c10d_functional", "c10d_functional", "_dtensor", "higher_order",
                     "npu", "air", "npu_define", "quantized", "_quantized", "rngprims", "mkldnn", "profiler",
                     "inductor"}
# modules the reproducer's own machinery pins or provides
_BASE = {"torch", "torch_npu", "torchair", "airctl", "safetensors", "__future__"}


def _script_imports(script: Path, source: bytes) -> list[str]:
    tree = ast.parse(source)
    here = script.resolve().parent
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module.split(".")[0])
    return [n for n in dict.fromkeys(names)
            if not (here / f"{n}.py").is_file() and not (here / n / "__init__.py").is_file()]


def _custom_ops(graphs: list[Any]) -> list[str]:
    """Qualified names (``ns::op``) of the ops the graphs call."""
    names: list[str] = []
    for gm, _inputs in graphs or []:
        for node in gm.graph.nodes:
            name = getattr(node.target, "_qualified_op_name", None) or \
                getattr(getattr(node.target, "_schema", None), "name", "")  # a packet, or an overload
            if node.op == "call_function" and "::" in str(name):
                names.append(str(name))
    return list(dict.fromkeys(names))


def _registering_module(qualname: str) -> str:
    """The loaded module whose file registers ``ns::op`` (a library registers its ops in a submodule that
    importing the package does not load: transformers.integrations.moe); the package when none says so."""
    top = qualname.split("::")[0]
    for name, module in sorted(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if (name == top or name.startswith(top + ".")) and file and file.endswith(".py"):
            try:
                if qualname in Path(file).read_text(encoding="utf-8", errors="replace"):
                    return name
            except OSError:
                continue
    return top


def _distribution(module: str) -> tuple[str, str] | None:
    """(distribution, version) installed for a top-level module, or None (not from a distribution)."""
    for dist in importlib.metadata.packages_distributions().get(module, []):
        version = installed_version(dist)
        if version is not None:
            return dist, version
    return None


def outside_modules(script: Path, source: bytes, graphs: list[Any] | None = None) -> dict[str, dict[str, Any]]:
    """``{module: {"distribution", "version", "why"}}`` for what the model (``script``, its ``source``)
    needs beyond torch and airctl."""
    found: dict[str, dict[str, Any]] = {}
    ops = [q for q in _custom_ops(graphs or []) if q.split("::")[0] not in _TORCH_NAMESPACES
           and q.split("::")[0] in sys.modules]
    for name, why in [*((n, "imported by the script") for n in _script_imports(script, source)),
                      *((q.split("::")[0], f"registers torch.ops.{q.replace('::', '.')}, which the graph calls")
                        for q in ops)]:
        if name in _BASE or name in sys.stdlib_module_names:
            continue
        entry = found.get(name)
        if entry is None:
            dist = _distribution(name)
            entry = found[name] = {"distribution": dist[0] if dist else None, "version": dist[1] if dist else None,
                                   "why": why, "imports": []}
        elif why not in entry["why"]:
            entry["why"] += f"; {why}"
    for qualname in ops:  # what a graph-form model.py imports before it calls them
        entry = found.get(qualname.split("::")[0])
        module = _registering_module(qualname)
        if entry is not None and module not in entry["imports"]:
            entry["imports"].append(module)
    return found


def write_requirements(folder: Path, modules: dict[str, dict[str, Any]]) -> list[str]:
    """requirements.txt: the base pins, then the model's modules (one line each, with why)."""
    lines = ["# What this reproducer needs, as installed where it was made (airctl itself: from its repository).",
             "# torch's CPU wheel: pip install -r requirements.txt --extra-index-url "
             "https://download.pytorch.org/whl/cpu"]
    pins = ((d, installed_version(d)) for d in ("torch", "torch-npu", "safetensors", "numpy"))
    lines += [f"{d}=={v}" for d, v in pins if v is not None]
    for name, info in modules.items():
        if info["distribution"]:
            lines.append(f"{info['distribution']}=={info['version']}  # {name}: {info['why']}")
        else:
            lines.append(f"# {name}: {info['why']}, not from an installed distribution: provide it yourself")
    (folder / "requirements.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["requirements.txt"]


def add_imports(model_py: Path, modules: dict[str, dict[str, Any]]) -> None:
    """Import the modules whose ops a graph-form model.py calls, before it uses them."""
    wanted = [(m, n) for n, info in modules.items() for m in info.get("imports", [])]
    if not wanted or not model_py.is_file():
        return
    text = model_py.read_text(encoding="utf-8")
    lines = "".join(f"import {m}  # noqa: F401 - registers torch.ops.{n}.* ops the graph calls\n" for m, n in wanted)
    model_py.write_text(text.replace("\nimport torch\n", f"\nimport torch\n{lines}", 1), encoding="utf-8")


# run.sh's first step: every pin of requirements.txt is installed for the Python airctl runs on ($PYTHON, the
# interpreter of AIRCTL="<python> -m airctl", the one beside the airctl command, else python3)
CHECK_SH = r'''
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  case "$AIRCTL" in
    *" -m airctl"*) PY="${AIRCTL%% -m airctl*}" ;;
    airctl) d="$(dirname "$(command -v airctl)")"; if [ -x "$d/python" ]; then PY="$d/python"; fi ;;
  esac
fi
PY="${PY:-python3}"
"$PY" - <<'PYEOF' || exit 2
import importlib.metadata as md, sys
missing = []
for line in open("requirements.txt"):
    pin = line.split("#")[0].strip()
    if not pin:
        continue
    dist, _, want = pin.partition("==")
    try:
        have = md.version(dist)
    except md.PackageNotFoundError:
        missing.append(pin)
        continue
    if want and have != want:
        print(f"run.sh: {dist} {have} is installed, the reproducer was made with {want}", file=sys.stderr)
if missing:
    print("run.sh: not installed: " + ", ".join(missing), file=sys.stderr)
    print("run.sh: install them with: pip install -r requirements.txt", file=sys.stderr)
    sys.exit(1)
PYEOF
'''

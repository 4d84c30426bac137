"""What an incremental apply's reuse is keyed by: everything that could change the AOT graph.

Each part is kept by name (docs/incremental.md lists them), so a mismatch says which one changed
(``-v``): the user and the install (interpreter, venv, the airctl package's files, the
site-packages folders), the versions of Python, torch, torch-npu (TorchAir) and transformers,
the variables read when torch and TorchAir start, the whole environment but a few volatile
variables (:data:`VOLATILE_ENV`), the working folder, the backend, the model script and the Python
files beside it, the entry, the model's module tree with each module's plain settings, the model's
weights and the inputs as loaded (their bytes), the mode, the options, the TorchAir passes
switched off, the seed, the grad mode of the trace and the capture level (the Dynamo stage
replayed keeps its text or not).
The pass file is not part of it: the user's passes run on the graph reused.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.safe_files import open_regular
from airctl.torch_env import installed_version as _version

# variables that change between two commands of one shell without changing what a model is, and
# airctl's own settings of where and how a command runs: left out of the key's environment
VOLATILE_ENV = frozenset({"_", "OLDPWD", "PWD", "SHLVL", "COLUMNS", "LINES", "PYTEST_CURRENT_TEST", "AIRCTL_OUT",
                          "AIRCTL_INCREMENTAL", "AIRCTL_TRACEBACK", "AIRCTL_VERBOSE", "AIRCTL_WARM", "AIRCTL_WARM_DIR",
                          "AIRCTL_WARM_IDLE", "AIRCTL_WARM_OWNER", "AIRCTL_TOOL_TIMEOUT"})
MAX_SIBLINGS = 200  # Python files beside the model script hashed with it (a model's local imports)
MAX_SIBLING_BYTES = 4 << 20

# how each part is named when it differs (-v)
PARTS = {
    "user": "the user", "install": "the install (interpreter, venv or airctl's files)",
    "python": "the Python version", "torch": "the torch version", "torch_npu": "the torch-npu (TorchAir) version",
    "transformers": "the transformers version", "env": "the environment variables torch and TorchAir read",
    "environ": "the environment (a variable the model script may read)", "cwd": "the working folder",
    "backend": "the backend", "script": "the model script", "siblings": "the Python files beside the model script",
    "entry": "the entry", "modules": "the model's modules and their settings",
    "weights": "the model's weights", "inputs": "the inputs", "mode": "the mode",
    "options": "the options", "torchair_off": "the TorchAir passes switched off", "seed": "the seed",
    "grad": "the grad mode of the trace", "capture": "the capture level",
}


def _file_digest(path: Path, limit: int) -> str:
    with open_regular(path) as f:  # a FIFO beside the script must not hang the key
        return hashlib.sha256(f.read(limit + 1)).hexdigest()


def _script_digest(loaded: Any, script: Path) -> str:
    """The digest of the bytes the script ran from (its loader keeps them: a file changed since is not
    what was compiled), else of the file."""
    from airctl.pipeline.run.model_script import ran_from

    source = ran_from(loaded.module)
    return hashlib.sha256(source).hexdigest() if source is not None else _file_digest(script, 64 << 20)


def _siblings(script: Path) -> str:
    digest = hashlib.sha256()
    files = sorted(p for p in script.parent.glob("*.py") if p.resolve() != script.resolve())[:MAX_SIBLINGS]
    for p in files:
        try:
            digest.update(f"{p.name}:{_file_digest(p, MAX_SIBLING_BYTES)}\n".encode())
        except (OSError, AirctlError):  # unreadable, or not a regular file: its name is the key's
            digest.update(f"{p.name}:-\n".encode())
    return digest.hexdigest()


def tensors_digest(value: Any) -> str:
    """A digest of a nest of tensors and plain values: structure, dtypes, shapes, strides, bytes."""
    import torch
    from torch.utils._pytree import tree_flatten

    leaves, spec = tree_flatten(value)
    digest = hashlib.sha256(str(spec).encode())
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            t = leaf.detach()
            digest.update(f"T{t.dtype}{tuple(t.shape)}{t.stride()}{t.device.type}{leaf.requires_grad}".encode())
            # reshape(-1): a 0-dim tensor (a scale, a step count) has no byte view of its own
            digest.update(t.contiguous().cpu().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        else:
            digest.update(repr((type(leaf).__name__, leaf)).encode())
    return digest.hexdigest()


def _weights(model: Any) -> str:
    import torch

    if not isinstance(model, torch.nn.Module):
        return tensors_digest(model) if isinstance(model, torch.Tensor) else f"<{type(model).__qualname__}>"
    state = {f"p:{k}": v for k, v in model.named_parameters(remove_duplicate=False)}
    state.update({f"b:{k}": v for k, v in model.named_buffers(remove_duplicate=False)})
    return tensors_digest([model.training, sorted(state), list(state[k] for k in sorted(state))])


def _modules(model: Any, script: str = "") -> str:
    """The model's module tree: each module's path, class and plain settings (an ``sdpa`` flag, an
    ``eps``): a forward that branches on one traces another graph with the same weights."""
    import torch

    if not isinstance(model, torch.nn.Module):
        return f"<{type(model).__module__}.{type(model).__qualname__}>"
    rows = []
    for name, module in model.named_modules(remove_duplicate=False):
        plain = sorted((k, repr(v)) for k, v in vars(module).items()
                       if not k.startswith("_") and (v is None or isinstance(v, (bool, int, float, str, tuple))))
        where = "<script>" if type(module).__module__ == script else type(module).__module__  # named per load
        rows.append(f"{name}:{where}.{type(module).__qualname__}:{plain}")
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def _environ() -> str:
    from airctl.pipeline.warm import place

    skip = VOLATILE_ENV | place.IMPORT_EXEMPT  # set by airctl or torch themselves, or seen by ``install``
    env = sorted((k, v) for k, v in os.environ.items() if k not in skip)
    return hashlib.sha256(repr(env).encode()).hexdigest()


def compute(target: Any, backend: str, loaded: Any, grad: bool) -> dict[str, Any]:
    """The key of one compile (``target``: the Target; ``loaded``: the model script as loaded, before any run)."""
    import torch

    from airctl.pipeline.warm import place

    script = Path(target.model_path)
    return {
        "user": os.getuid(), "install": place.install(dict(os.environ)), "python": sys.version,
        "torch": torch.__version__, "torch_npu": _version("torch-npu"),
        "transformers": _version("transformers"), "env": sorted(place.import_env(dict(os.environ)).items()),
        "environ": _environ(), "cwd": os.getcwd(),
        "backend": backend, "script": _script_digest(loaded, script), "siblings": _siblings(script),
        "entry": target.entry, "weights": _weights(loaded.model),
        "modules": _modules(loaded.model, getattr(loaded.module, "__name__", "")),
        "inputs": tensors_digest(loaded.inputs),
        "mode": str(target.mode), "options": sorted(target.options.items()),
        "torchair_off": sorted(target.torchair_off), "seed": target.seed, "grad": grad,
        "capture": str(target.capture),
    }


def differences(kept: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What changed, in words (empty: the same key)."""
    names = list(PARTS) + sorted((set(kept) | set(now)) - set(PARTS))
    return [PARTS.get(k, k) for k in names if _plain(kept.get(k)) != _plain(now.get(k))]


def _plain(v: Any) -> Any:
    """A key part as JSON gives it back (tuples are lists)."""
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v

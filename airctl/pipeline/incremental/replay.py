"""An incremental compile: TorchAir's compiler on the kept AOT graph, Dynamo and AOT skipped.

:func:`find` looks through the runs of ``--out`` (newest first) for a kept pre-pass graph
(:mod:`.keep`) whose key (:mod:`.key`) is this compile's, in a folder of this user's that no
one else may write; otherwise it says why not. :func:`compiled_model` stands in for
``torch.compile(model)``: it rebuilds the graph (:mod:`.graph_codec`), checks every value by
fake-tensor propagation, replays the kept run's Dynamo stage into the new ledger, and hands the
graph to TorchAir's compiler with the wrappers TorchAir's backend puts around it for AOT
(``_wrap_compiler``, the inputs' custom attributes, the debug phase) — so TorchAir's FX passes,
the user's passes, the conversion and the checked run are the full compile's. At the call it
gathers the graph's inputs (parameters, buffers, inputs) and runs the compiled graph as AOT's
runtime does (boxed, grad off), and builds the model's output from the graph's outputs.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl.io.compressed import read_bytes
from airctl.pipeline.incremental.graph_codec import Unsupported, check_vals, decode
from airctl.pipeline.incremental.graph_values import decode_value
from airctl.pipeline.incremental.keep import CONSTANTS, FORMAT, KEPT, VERSION
from airctl.pipeline.incremental.key import differences

MAX_KEPT_BYTES = 256 << 20
MAX_RUNS = 50  # runs of --out looked at, newest first
COMPILER_MODULES = ("torchair.npu_fx_compiler", "npugraph_ex.npu_fx_compiler")  # TorchAir's, npugraph_ex's


@dataclass
class Found:
    run: Path  # the run whose graph is reused
    data: dict[str, Any]


def _private(path: Path) -> str | None:
    """Why ``path`` may not be trusted (another user's, or writable by others), or None."""
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a link"
    if info.st_uid != os.getuid():
        return f"{path} belongs to uid {info.st_uid}"
    if info.st_mode & 0o022:
        return f"{path} may be written by others (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def find(out_dir: Path, key: dict[str, Any]) -> tuple[Found | None, str]:
    """The newest run of ``out_dir`` with this key's kept graph, or None and why not."""
    from airctl.ledger.runs import run_folders

    try:
        runs = sorted(run_folders(Path(out_dir)), key=lambda p: p.name, reverse=True)[:MAX_RUNS]
    except OSError:
        runs = []
    closest: str | None = None
    for run in runs:
        path = run / KEPT
        if not path.is_file():
            continue
        refused = _private(path) or _private(path.parent)
        if refused:
            closest = closest or f"{run.name}'s kept graph is refused: {refused}"
            continue
        try:
            data = json.loads(read_bytes(path)) if path.stat().st_size <= MAX_KEPT_BYTES else {}
        except (OSError, ValueError) as e:
            closest = closest or f"{run.name}'s kept graph does not read: {e}"
            continue
        if not isinstance(data, dict) or not isinstance(data.get("key"), dict) or \
                data.get("format") != FORMAT or data.get("version") != VERSION:
            closest = closest or f"{run.name}'s kept graph is of another airctl"
            continue
        changed = differences(data["key"], key)
        if not changed:
            return Found(run, data), ""
        closest = closest or f"since {run.name}, {', '.join(changed)} changed"
    return None, closest or "no run of this folder kept a pre-pass graph"


def _flat_args(data: dict[str, Any], model: Any, args: tuple, kwargs: dict) -> list[Any]:
    from torch.utils._pytree import tree_flatten

    leaves, _ = tree_flatten((args, kwargs))
    params = dict(model.named_parameters(remove_duplicate=False)) if hasattr(model, "named_parameters") else {}
    buffers = dict(model.named_buffers(remove_duplicate=False)) if hasattr(model, "named_buffers") else {}
    out = []
    for kind, where in data["sources"]:
        table: Any = {"param": params, "buffer": buffers, "input": dict(enumerate(leaves))}[kind]
        if where not in table:
            raise Unsupported(f"the model has no {kind} {where}")
        out.append(table[where])
    return out


def _constants(run: Path, graph: dict[str, Any]) -> dict[str, Any]:
    """The kept graph's constant tensors (safetensors: no code runs to read them)."""
    if not graph.get("constants"):
        return {}
    return read_safetensors(run / CONSTANTS, MAX_KEPT_BYTES)


def read_safetensors(path: Path, limit: int) -> dict[str, Any]:
    """The tensors of a kept run's safetensors file (reading them runs no code); Unsupported when it is
    missing, not this user's own, writable by others, or over ``limit`` bytes."""
    refused = _private(path) if path.is_file() else f"{path} is missing"
    if refused or path.stat().st_size > limit:
        raise Unsupported(refused or f"{path} is too large")
    from safetensors.torch import load

    return load(path.read_bytes())


def dynamo_stage(run: Path) -> tuple[Any, str | None, str]:
    """The kept run's Dynamo stage: its graph, its text and its graph id."""
    from airctl.ledger.reader import Ledger, stage_path

    ledger = Ledger.open(run)
    gid = ledger.graph_ids()[0]
    stage = next(s for s in ledger.stages(gid) if s.name == "dynamo")
    text_file = getattr(stage.entry, "text", None)
    text = read_bytes(stage_path(run, text_file, stage.name)).decode() if text_file else None
    return ledger.load(stage), text, gid


def compiled_model(found: Found, loaded: Any, config: Any, session: Any) -> Any:
    """A callable that stands for ``torch.compile(loaded.model, backend=TorchAir)`` (see the module)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from airctl.pipeline.run.model_script import split_inputs

    data, model = found.data, loaded.model
    args, kwargs = split_inputs(loaded.inputs)
    real = _flat_args(data, model, args, kwargs)
    gm = decode(data["graph"], model, _constants(found.run, data["graph"]), getattr(loaded.module, "__name__", ""))
    fake_mode = FakeTensorMode(shape_env=ShapeEnv())
    fakes = [fake_mode.from_tensor(t, static_shapes=True) for t in real]
    if data["phase"] == "forward":  # AOT's forward graph takes its inputs detached
        fakes = [f.detach() if f.requires_grad else f for f in fakes]
    check_vals(gm, data["graph"], fakes)
    if data.get("compiler_module") not in COMPILER_MODULES:
        raise Unsupported(f"no FX compiler {data.get('compiler_module')!r}")

    graph, text, _ = dynamo_stage(found.run)
    n_out, outputs, phase = int(data["num_outputs"]), data["outputs"], data["phase"]
    attrs = {int(i): {k: decode_value(v, {}) for k, v in a.items()} for i, a in data["custom_attr"].items()}
    compiled_fw: list[Any] = []

    def compile_once() -> Any:
        """TorchAir's compile of the graph, at the first call (where Dynamo would have compiled)."""
        import importlib
        from types import SimpleNamespace

        from torch._functorch._aot_autograd.utils import make_boxed_func
        from torch._guards import TracingContext, tracing

        nfc = importlib.import_module(data["compiler_module"])

        session.dynamo_count += 1
        session._training = data["training"]
        session._pending_dynamo = (graph, text if session.texts else None)
        c = nfc._wrap_compiler(nfc.get_compiler(config), config, len(real), phase)
        c = nfc._set_inputs_custom_attr_to_compiler(c, attrs)
        c = nfc.wrap_compiler_phase(c, phase)
        context = TracingContext(fake_mode)  # as AOT calls the compiler: TorchAir finds the graph's fake mode,
        context.fw_metadata = SimpleNamespace(static_input_indices=list(data["static_inputs"]))  # and the static inputs
        with tracing(context), fake_mode, torch.no_grad():  # AOT's compiler call: its fake mode on, grad off
            compiled = c(gm, fakes)
        return compiled if hasattr(compiled, "_boxed_call") else make_boxed_func(compiled)  # as AOT boxes it

    def run(*call_args: Any, **call_kwargs: Any) -> Any:
        from torch._functorch._aot_autograd.utils import call_func_at_runtime_with_args
        from torch.utils._pytree import tree_unflatten, treespec_loads

        if not compiled_fw:
            compiled_fw.append(compile_once())
        flat = _flat_args(data, model, call_args, call_kwargs)
        with torch.no_grad():  # AOT's runtime runs the forward graph with grad off
            outs = call_func_at_runtime_with_args(compiled_fw[0], flat, disable_amp=torch._C._is_any_autocast_enabled())
        user = list(outs)[:n_out]
        return tree_unflatten([user[i] for i in outputs["leaves"]], treespec_loads(outputs["spec"]))

    return run

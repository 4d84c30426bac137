"""A full compile keeps what a later incremental apply starts from (``incremental/pre_pass.json.gz``).

:class:`Keeper` watches one compile through the capture session: the Dynamo graph's example
inputs (each must be one of the model's parameters or buffers, or one of the inputs, by
identity: that is how a replay finds them again), the AOT graph TorchAir's compiler received
(:mod:`.graph_codec`), AOT's metadata (no input mutation, no aliased output, one graph), and,
at the first call of what the backend returned, the graph's outputs; after the checked run,
where each leaf of the model's output came from. Anything it cannot account for leaves a
reason instead of a file (``-v`` says it), and the next loop command compiles in full.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from airctl.io.compressed import gzip_bytes
from airctl.pipeline.incremental.graph_codec import Unsupported, encode

KEPT = "incremental/pre_pass.json.gz"
CONSTANTS = "incremental/constants.safetensors"  # the graph's constant tensors (get_attr), when it has any
FORMAT = "airctl-incremental"
VERSION = 1


class Keeper:
    """What one full compile keeps for the next (see the module)."""

    def __init__(self, key: dict[str, Any], loaded: Any, compiler_module: str) -> None:
        self.key, self.loaded, self.compiler_module = key, loaded, compiler_module
        self.static_inputs: list[int] = []
        self.why_not: str | None = None
        self.sources: list[list[Any]] | None = None
        self.custom_attr: dict[str, Any] = {}
        self.graph: dict[str, Any] | None = None
        self.constants: dict[str, Any] = {}
        self.phase: str | None = None
        self.training = False
        self.num_outputs = 0
        self.graph_outputs: list[Any] | None = None
        self.dynamo_graphs = 0
        self.aot_graphs = 0
        self.eager: Any = None  # the eager reference's outputs, and the eager check: kept for reuse (.reuse)
        self.eager_check: Any = None

    def refuse(self, why: str) -> None:
        self.why_not = self.why_not or why

    # -- during the compile ------------------------------------------------------------------------
    def dynamo_graph(self, gm: Any, example_inputs: list[Any], training: bool) -> None:
        self.dynamo_graphs += 1
        self.training = training
        if self.dynamo_graphs > 1:
            return self.refuse("Dynamo made more than one graph (a graph break or a recompile)")
        try:  # nothing here may fail the compile: a reason instead (also for the except below)
            self.sources = _sources(self.loaded, example_inputs)
            import importlib

            from airctl.pipeline.incremental.graph_values import encode_value

            attrs = importlib.import_module(self.compiler_module)._get_inputs_custom_attr(example_inputs)
            self.custom_attr = {str(i): {k: encode_value(v) for k, v in a.items()} for i, a in attrs.items()}
        except Unsupported as e:
            self.refuse(str(e))
        except Exception as e:  # noqa: BLE001 - keeping is a side job of the compile
            self.refuse(f"{type(e).__name__}: {e}")
        return None

    def aot_graph(self, gm: Any, phase: str) -> None:
        self.aot_graphs += 1
        if self.aot_graphs > 1 or phase not in ("forward", "inference"):
            return self.refuse(f"AOT made a {phase} graph besides the first")
        self.phase = "forward" if self.training else "inference"
        try:
            self.num_outputs, self.static_inputs = _aot_outputs(gm, len(self.sources or []))
            self.graph, self.constants = encode(gm, getattr(self.loaded.module, "__name__", ""))
        except Unsupported as e:
            self.refuse(str(e))
        except Exception as e:  # noqa: BLE001 - keeping is a side job of the compile
            self.refuse(f"{type(e).__name__}: {e}")
        return None

    def wrap_compiled(self, compiled: Any) -> Any:
        """What the backend returned, noting the graph's outputs at its first call."""
        import functools

        @functools.wraps(compiled)
        def first_outputs(*args: Any) -> Any:
            out = compiled(*args)
            if self.graph_outputs is None:
                self.graph_outputs = list(out) if isinstance(out, (list, tuple)) else [out]
            return out

        return first_outputs

    # -- after the checked run ---------------------------------------------------------------------
    def write(self, root: Path, compiled_out: Any, events: Any = None) -> str | None:
        """Write the kept graph into the run's folder; returns why not, or None. ``events``: the run's
        ``airctl why`` events so far (a replay would not have Dynamo's)."""
        if self.why_not is None and (self.graph is None or self.graph_outputs is None):
            self.refuse("the compile did not reach TorchAir's compiler and a run")
        if events:
            self.refuse("Dynamo or TorchAir's cache reported events (airctl why) a replay would not have")
        if self.why_not is None:
            try:
                outputs = _output_map(compiled_out, self.graph_outputs or [])
            except Unsupported as e:
                self.refuse(str(e))
        if self.why_not is not None:
            return self.why_not
        data = {"format": FORMAT, "version": VERSION, "key": self.key, "phase": self.phase,
                "training": self.training, "sources": self.sources, "custom_attr": self.custom_attr,
                "num_outputs": self.num_outputs, "outputs": outputs, "static_inputs": self.static_inputs,
                "compiler_module": self.compiler_module, "graph": self.graph}
        from airctl.pipeline.incremental.reuse import REUSE, pack

        data["reuse"], reused = pack(self.eager, self.eager_check)
        try:
            (root / KEPT).parent.mkdir(mode=0o700, exist_ok=True)
            if self.constants:
                from safetensors.torch import save

                _write(root / CONSTANTS, save({k: v.detach().clone() for k, v in self.constants.items()}))
            if reused is not None:
                _write(root / REUSE, reused)
            _write(root / KEPT, gzip_bytes(json.dumps(data)))
        except (OSError, ValueError, TypeError) as e:  # a full disk: the run itself is not the worse for it
            return f"the kept graph could not be written: {e}"
        return None


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    tmp.replace(path)


def _sources(loaded: Any, example_inputs: list[Any]) -> list[list[Any]]:
    """Where each example input of the Dynamo graph comes from: ``["param", name]``, ``["buffer",
    name]`` or ``["input", leaf]`` (a leaf of the call's ``(args, kwargs)``)."""
    import torch
    from torch.utils._pytree import tree_flatten

    from airctl.pipeline.run.model_script import split_inputs

    model = loaded.model
    where: dict[int, list[Any]] = {}
    leaves, _ = tree_flatten(split_inputs(loaded.inputs))
    for i, leaf in enumerate(leaves):
        where.setdefault(id(leaf), ["input", i])
    if isinstance(model, torch.nn.Module):
        for name, p in model.named_parameters(remove_duplicate=False):
            where.setdefault(id(p), ["param", name])
        for name, b in model.named_buffers(remove_duplicate=False):
            where.setdefault(id(b), ["buffer", name])
    out = []
    for i, t in enumerate(example_inputs):
        if not isinstance(t, torch.Tensor) or id(t) not in where:
            raise Unsupported(f"Dynamo's input {i} is not a parameter, buffer or input of the model")
        out.append(where[id(t)])
    return out


def _aot_outputs(gm: Any, n_inputs: int) -> tuple[int, list[int]]:
    """How many of the AOT graph's outputs are the model's (the rest are saved for backward), and
    AOT's static inputs (the aclgraph modes read them); refuses what a replay could not hand back
    as AOT's runtime does."""
    from torch._guards import TracingContext

    ctx = TracingContext.try_get()
    meta = getattr(ctx, "fw_metadata", None)
    if meta is None:
        raise Unsupported("no AOT metadata")
    placeholders = sum(1 for n in gm.graph.nodes if n.op == "placeholder")
    if placeholders != n_inputs:
        raise Unsupported(f"AOT's graph has {placeholders} inputs, Dynamo's {n_inputs}")
    if meta.num_mutated_inp_runtime_indices or meta.num_intermediate_bases or getattr(meta, "tokens", None):
        raise Unsupported("the graph mutates an input or returns views of intermediates")
    if any(getattr(o.output_type, "name", "") != "non_alias" for o in meta.output_info):
        raise Unsupported("an output aliases an input or another output")
    if getattr(meta, "subclass_fw_graph_out_meta", None) and any(
            type(m).__name__ != "PlainTensorMeta" for m in meta.subclass_fw_graph_out_meta):
        raise Unsupported("a tensor subclass flows out of the graph")
    return len(meta.output_info), [int(i) for i in meta.static_input_indices]


def _output_map(compiled_out: Any, graph_outputs: list[Any]) -> dict[str, Any]:
    """Each leaf of the model's output as an index into the graph's outputs, and the output's shape."""
    from torch.utils._pytree import tree_flatten, treespec_dumps

    leaves, spec = tree_flatten(compiled_out)
    index = []
    for leaf in leaves:
        found = [i for i, g in enumerate(graph_outputs) if g is leaf]
        if not found:
            raise Unsupported(f"a leaf of the model's output ({type(leaf).__name__}) is not an output of the graph")
        index.append(found[0])
    try:
        dumped = treespec_dumps(spec)
    except Exception as e:  # noqa: BLE001 - a container pytree cannot write: compile in full
        raise Unsupported(f"the model's output ({type(compiled_out).__name__}) cannot be written") from e
    return {"leaves": index, "spec": dumped}

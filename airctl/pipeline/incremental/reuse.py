"""What an incremental compile reuses besides the graph: two eager runs whose results the key fixes.

A compile runs the model eagerly for the reference its outputs are checked against, and the eager
check (:mod:`airctl.instrument.eager_check`) runs the graph the first YAML pass receives before the
pass, to compare with the graph after it. Neither depends on the pass file: the reference is a
function of the model, its weights, inputs and seed, the install and environment — the kept graph's
key (:mod:`.key`) — and of torch's intra-op threads (the order of a reduction); the eager check's run
is a function of that graph, of its inputs' shapes and constants and of the same threads
(:func:`airctl.instrument.eager_check.run_key`). A full compile keeps both beside its pre-pass graph
(``incremental/reuse.safetensors``: tensors only, no pickle; their description in
``pre_pass.json.gz``), and a compile started from that graph takes them instead of running them
again when the key and these parts match; otherwise it runs them and ``-v`` says why.

Only what can be given back exactly is kept: CPU tensors (their dtype, shape, strides and
``requires_grad``), ``None``, booleans, integers, floats and strings, in a structure torch's
pytree writes and reads back (tuples, lists, dicts, named tuples, ``ModelOutput``\\ s with a
serialized type name), and only where the structure read back flattens to the same paths as the
one kept (the paths a mismatch message names).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airctl.pipeline.incremental.graph_codec import Unsupported

REUSE = "incremental/reuse.safetensors"
MAX_PART_BYTES = 64 << 20  # a part with more tensor bytes is not kept (written by every full compile)
PLAIN = (type(None), bool, int, float, str)


def threads() -> int:
    import torch

    return torch.get_num_threads()


def _pack(prefix: str, leaves: list[Any], tensors: dict[str, Any]) -> list[Any]:
    """Each leaf described (a tensor's name in ``tensors`` and its layout, or the plain value)."""
    import torch

    out: list[Any] = []
    size = 0
    for i, leaf in enumerate(leaves):
        if type(leaf) in (torch.Tensor, torch.nn.Parameter):
            if leaf.device.type != "cpu" or leaf.layout != torch.strided or leaf.is_complex():
                raise Unsupported(f"an output is a {leaf.device.type} {leaf.layout} {leaf.dtype} tensor")
            size += leaf.numel() * leaf.element_size()
            if size > MAX_PART_BYTES:
                raise Unsupported(f"its tensors take over {MAX_PART_BYTES >> 20} MiB")
            name = f"{prefix}.{i}"
            tensors[name] = leaf.detach().contiguous().clone()
            out.append({"tensor": name, "stride": list(leaf.stride()), "requires_grad": leaf.requires_grad})
        elif type(leaf) in PLAIN and not (isinstance(leaf, float) and leaf != leaf):
            out.append({"value": leaf})
        else:
            raise Unsupported(f"an output is a {type(leaf).__name__}")
    return out


def _unpack(described: list[Any], tensors: dict[str, Any]) -> list[Any]:
    import torch

    out = []
    for d in described:
        if "value" in d:
            out.append(d["value"])
            continue
        t = tensors[d["tensor"]]
        if list(t.stride()) != d["stride"]:
            t = torch.empty_strided(tuple(t.shape), tuple(d["stride"]), dtype=t.dtype).copy_(t)
        if d["requires_grad"]:
            t.requires_grad_(True)
        out.append(t)
    return out


def _paths(value: Any) -> list[str]:
    from airctl.execute.compare import flatten

    return [path for path, _ in flatten(value)]


def pack_eager(value: Any, tensors: dict[str, Any]) -> dict[str, Any]:
    """The eager reference's description (its tensors go into ``tensors``); Unsupported: not kept."""
    from torch.utils._pytree import tree_flatten, treespec_dumps

    leaves, spec = tree_flatten(value)
    try:
        dumped = treespec_dumps(spec)
    except Exception as e:  # noqa: BLE001 - a container pytree cannot write
        raise Unsupported(f"its output ({type(value).__name__}) cannot be written") from e
    return {"threads": threads(), "spec": dumped, "leaves": _pack("eager", leaves, tensors), "paths": _paths(value)}


def unpack_eager(described: dict[str, Any], tensors: dict[str, Any]) -> Any:
    from torch.utils._pytree import tree_unflatten, treespec_loads

    value = tree_unflatten(_unpack(described["leaves"], tensors), treespec_loads(described["spec"]))
    if _paths(value) != described["paths"]:
        raise Unsupported("its output does not read back with the same structure")
    return value


def pack_check(first: Any, tensors: dict[str, Any]) -> dict[str, Any]:
    """The eager check's first graph run (``EagerCheck.first``: its key and outcome)."""
    key, outcome = first
    if key is None:
        raise Unsupported("the graph's inputs or constants cannot be told apart")
    if outcome.outputs is None:
        return {"key": key, "skipped": outcome.skipped, "outputs": None}
    return {"key": key, "skipped": None, "outputs": _pack("check", list(outcome.outputs), tensors)}


def unpack_check(described: dict[str, Any], tensors: dict[str, Any]) -> tuple[str, Any]:
    from airctl.instrument.eager_check import Outcome

    outputs = described["outputs"]
    return described["key"], Outcome(None if outputs is None else _unpack(outputs, tensors), described["skipped"])


def read_tensors(run: Path, limit: int) -> dict[str, Any]:
    """The kept run's reused tensors (safetensors: reading them runs no code)."""
    from airctl.pipeline.incremental.replay import read_safetensors

    return read_safetensors(run / REUSE, limit)


def eager_check_of(session: Any) -> Any:
    """The capture's eager check (None where it has none)."""
    from airctl.instrument.eager_check import EagerCheck

    return next((i for i in getattr(session.runner, "instruments", []) if isinstance(i, EagerCheck)), None)


def pack(eager: Any, check: Any) -> tuple[dict[str, Any], bytes | None]:
    """What a full compile keeps for reuse: ``(description, the tensors as safetensors)``; a part it
    cannot keep is described by why not (``{"why_not": ...}``), and a later compile runs that part."""
    tensors: dict[str, Any] = {}
    described: dict[str, Any] = {}
    for part, thing, make in (("eager", eager, pack_eager), ("eager_check", getattr(check, "first", None), pack_check)):
        if thing is None:
            described[part] = {"why_not": "it did not run"}
            continue
        try:
            described[part] = make(thing, tensors)
        except Unsupported as e:
            described[part] = {"why_not": str(e)}
            prefix = "eager." if part == "eager" else "check."
            tensors = {k: v for k, v in tensors.items() if not k.startswith(prefix)}
    if not tensors:
        return described, None
    from safetensors.torch import save

    try:
        return described, save(tensors)
    except Exception as e:  # noqa: BLE001 - a dtype safetensors does not write: nothing is reused
        why = {"why_not": f"its tensors cannot be written ({type(e).__name__}: {e})"}
        return {part: d if "why_not" in d else why for part, d in described.items()}, None

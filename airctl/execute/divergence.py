"""Where do two FX graphs' values part? Run both node by node on the same inputs and compare.

A compile that gives wrong numbers shows only its outputs. To say *where* they go wrong,
``airctl bisect`` runs the graph a pass received and the graph it left with
:class:`torch.fx.Interpreter` on the same inputs, keeps every node's value, and walks the second
graph in order: the first node whose value differs from its counterpart's (beyond ``atol``) is
where the numbers part — msprobe's layer-by-layer compare, on FX nodes. Counterparts are found
by node name (passes that edit in place keep names), else by structure (the k-th node of the same
op). Nodes with no counterpart (inserted stream ops, records) and non-tensor values are passed
over. Values are compared by :func:`airctl.execute.compare.compare`.

>>> import torch
>>> def f(x): return torch.relu(x) + 1
>>> a = torch.fx.symbolic_trace(f); b = torch.fx.symbolic_trace(f)
>>> next(n for n in b.graph.nodes if n.name == "add").target = __import__("operator").sub
>>> _ = b.recompile()
>>> first_divergence(run_nodes(a, [torch.ones(2)]), run_nodes(b, [torch.ones(2)]))["node"]
'add'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from airctl.execute.compare import DEFAULT_ATOL, compare

SKIP_KINDS = ("placeholder", "output", "get_attr")


@dataclass
class NodeValues:
    """One run of a graph, node by node: ``(name, op)`` in graph order, each value, each source line."""

    order: list[tuple[str, str]]
    values: dict[str, Any]
    sources: dict[str, str | None]


def run_nodes(gm: Any, inputs: list[Any]) -> NodeValues:
    """Run ``gm`` on copies of ``inputs`` and keep every node's value (tensors detached and copied)."""
    import torch
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    from airctl.io.fx_reader import source_of, target_name

    values: dict[str, Any] = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n: Any) -> Any:
            out = super().run_node(n)
            values[n.name] = out.detach().clone() if isinstance(out, torch.Tensor) else out
            return out

    with unset_fake_temporarily(), torch.no_grad():
        torch.manual_seed(0)
        Recorder(gm).run(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    order = [(n.name, n.op if n.op in SKIP_KINDS else target_name(n.target)) for n in gm.graph.nodes]
    return NodeValues(order, values, {n.name: source_of(n.meta) for n in gm.graph.nodes})


def _structure(order: list[tuple[str, str]]) -> dict[str, str]:
    """name -> ``op#k`` (the k-th node of that op)."""
    counts: dict[str, int] = {}
    keys = {}
    for name, op in order:
        k = counts.get(op, 0)
        counts[op] = k + 1
        keys[name] = f"{op}#{k}"
    return keys


def first_divergence(before: NodeValues, after: NodeValues, atol: float = DEFAULT_ATOL) -> dict[str, Any] | None:
    """The first node of ``after`` whose value differs from its counterpart in ``before`` (None: none does).

    Returns ``{"node", "op", "op_before", "counterpart", "source", "max_abs_error", "message", "compared"}``."""
    import torch
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():  # inside TorchAir's passes a fake mode is active
        return _first(before, after, atol, torch.Tensor)


def _first(before: NodeValues, after: NodeValues, atol: float, tensor: type) -> dict[str, Any] | None:
    ops_before = dict(before.order)
    by_key = {key: name for name, key in _structure(before.order).items()}
    keys_after = _structure(after.order)
    compared = 0
    for name, op in after.order:
        value = after.values.get(name)
        if op in SKIP_KINDS or not isinstance(value, tensor):
            continue
        twin = name if name in ops_before else by_key.get(keys_after[name])
        if twin is None or not isinstance(before.values.get(twin), tensor):
            continue
        compared += 1
        result = compare(before.values[twin], value, atol=atol, rtol=atol, labels=("before", "after"))
        if not result.matches:
            return {"node": name, "op": op, "op_before": ops_before[twin], "counterpart": twin,
                    "source": after.sources.get(name), "max_abs_error": result.max_abs_error,
                    "message": "; ".join(m.replace("out", name, 1) for m in result.mismatches), "compared": compared}
    return None

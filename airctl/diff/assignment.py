"""The assignment report (``airctl show --assignment``): where each node of a graph's final FX stage
went. One category per node, with what it is and why:

=================  ===========================================================================
category           the node
=================  ===========================================================================
converted          became GE op(s) that are in the last GE stage (named: TorchAir's
                   ``_fx_tensor_name``, :mod:`airctl.diff.provenance`)
fused away         became GE ops in the first GE stage, none of which is left in the last one
                   (GE's optimizer fused or removed them)
not converted      no GE op names it (folded by TorchAir's converter, or an op without output)
captured           aclgraph / npugraph_ex: a kernel launched inside the captured NPU graph(s)
                   (``captured``: the graph keys npugraph_ex captured, from the ledger's captures)
fallen back        aclgraph / npugraph_ex: a kernel of a graph that fell back to eager
                   (the capture limit was reached): it runs op by op
kept in Python     host work, no kernel: ``getitem`` of a tuple, symbolic sizes and arithmetic
stream control     an event record or wait (``air.record``, ``air.wait``, TorchAir's tagged events):
                   a control edge and stream attributes in GE, an event in aclgraph
scope              ``scope_enter`` / ``scope_exit``: attributes on the ops inside, no op of its own
input / output     a placeholder or parameter (GE: a Data or Const op) / the graph's output
=================  ===========================================================================

Beside the category: ``static_kernel`` (a kernel of an aclgraph mode: True when the run's options ask TorchAir
to build static-shape kernels for it, else False; None for everything else: GE compiles its own),
``super_kernel`` (the innermost ``_super_kernel_scope`` around the node: ``torchair.scope.super_kernel``
or the YAML ``super_kernel`` pass, read from the FX graph's scope nodes) and ``stream``.

The GE ops are the same index the origin chains use (:meth:`airctl.diff.chain_graphs.Snapshots.ge_by_fx`).
GE's own compile statistics are cross-checked by :mod:`airctl.diff.compile_stat`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from airctl.diff.chain import fx_stages
from airctl.diff.chain_graphs import Snapshots
from airctl.graph.model import Graph, Node
from airctl.graph.roles import Role, role_of
from airctl.ledger.reader import Ledger
from airctl.verify.plan import scope_keys_values

CATEGORIES = ("converted", "fused away", "not converted", "captured", "fallen back", "kept in Python",
              "stream control", "scope", "input", "output")
SUPER_KERNEL_KEY = "_super_kernel_scope"
_HOST_OPS = ("getitem", "_operator.getitem", "operator.getitem")
_HOST_PREFIXES = ("_operator.", "operator.", "math.", "torch.sym_", "sym_", "aten.sym_", "aten._assert",
                  "torch._assert", "torch.ops.aten.sym_", "aten.sym_size", "aten._local_scalar_dense")


def is_host_op(op: str) -> bool:
    """Host-side work with no kernel: tuple indexing, symbolic sizes and their arithmetic, asserts.

    >>> is_host_op("_operator.getitem"), is_host_op("aten.sym_size.int"), is_host_op("aten.mm.default")
    (True, True, False)
    """
    return op in _HOST_OPS or op.startswith(_HOST_PREFIXES)


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def super_kernel_scopes(graph: Graph) -> dict[str, str]:
    """Node -> the innermost super kernel scope open around it (scope_enter / scope_exit nodes in
    program order; a scope of ``''`` opts a range out)."""
    out: dict[str, str] = {}
    stack: list[str | None] = []
    for node in graph.nodes:
        role = role_of(node)
        if role is Role.SCOPE_ENTER:
            keys, values = scope_keys_values(node)
            pairs = dict(zip(keys, values, strict=False)) if isinstance(keys, (list, tuple)) and isinstance(
                values, (list, tuple)) else {}
            value = pairs.get(SUPER_KERNEL_KEY)
            stack.append(str(value) if value is not None else (stack[-1] if stack else None))
        elif role is Role.SCOPE_EXIT:
            if stack:
                stack.pop()
        elif stack and stack[-1]:
            out[node.name] = stack[-1]
    return out


def _captures(led: Ledger, gid: str) -> tuple[list[Any], bool]:
    """The graph keys npugraph_ex captured for graph ``gid``, and whether it fell back to eager."""
    keys: list[Any] = []
    fell = False
    for row in led.index.captures or []:
        if row.get("graph") != gid:
            continue
        if row.get("event") == "fallback":
            fell = True
        elif row.get("event") in ("capture", "recapture") and row.get("key") not in keys:
            keys.append(row.get("key"))
    return keys, fell


def _category(node: Node, role: Role, aclgraph: bool, ge_last: list[Node], ge_first: list[Node],
              has_ge: bool, fell: bool) -> tuple[str, str]:
    if role is Role.INPUT:
        return "input", "a graph input or parameter" + (f": {', '.join(o.op for o in ge_last)}" if ge_last else "")
    if role is Role.OUTPUT:
        return "output", "the graph's outputs"
    if role in (Role.SCOPE_ENTER, Role.SCOPE_EXIT):
        return "scope", ("opens" if role is Role.SCOPE_ENTER else "closes") + (
            " a scope: its attributes (stream, super kernel, ...) go on the ops inside, no op of its own")
    if role is not Role.OP:
        return "stream control", ("a control edge and stream attributes in GE" if has_ge
                                  else "an event record or wait in the captured graph")
    if is_host_op(node.op):
        return "kept in Python", "host work: no kernel"
    if aclgraph:
        if fell:
            return "fallen back", "the graph fell back to eager (capture limit reached): launched op by op"
        return "captured", "a kernel launched inside the captured NPU graph"
    if ge_last:
        return "converted", ", ".join(f"{o.name} ({o.op})" for o in ge_last)
    if ge_first:
        return "fused away", "GE's optimizer fused or removed " + ", ".join(f"{o.name} ({o.op})" for o in ge_first)
    if has_ge:
        return "not converted", "no GE op names it: folded by TorchAir's converter, or no output"
    return "not converted", "the run has no GE graph (a failed or partial compile)"


def assignment_table(led: Ledger, snaps: Snapshots | None = None) -> dict[str, Any]:
    """``{"run", "mode", "static_kernel_option", "static_kernels", "graphs": [{graph, stage, ge_stages,
    ge_ops_lost, captured, fell_back, nodes, totals}], "totals", "compile_stat"}``; each node ``{node,
    op, stream, category, detail, ge_ops, static_kernel, super_kernel}``; ``snaps``: the ledger's
    snapshots as the caller loaded them (the report's)."""
    from airctl.diff.compile_stat import cross_check

    mode = led.index.run_mode
    aclgraph = mode is not None and mode.is_aclgraph
    option = mode.meaning.static_kernel_option if mode is not None else None  # static-shape kernels, per mode
    static_on = option is not None and _truthy((led.index.options or {}).get(option, False))
    snaps = snaps or Snapshots(led)
    graphs: list[dict[str, Any]] = []
    totals: Counter[str] = Counter()
    for gid in led.graph_ids():
        _, fx, ge = fx_stages(led, gid)
        if not fx:
            continue
        final = next((s for s in reversed(fx) if s.name == "fx-final"), fx[-1])
        graph = snaps(final)
        last = snaps.ge_by_fx(ge[-1]) if ge else {}
        first = snaps.ge_by_fx(ge[0]) if ge else {}
        keys, fell = _captures(led, gid)
        scopes = super_kernel_scopes(graph)
        rows = []
        for node in graph.nodes:
            role = role_of(node)
            ge_last, ge_first = last.get(node.name, []), first.get(node.name, [])
            category, detail = _category(node, role, aclgraph, ge_last, ge_first, bool(ge), fell)
            kernel = category in ("captured", "fallen back")
            if category == "captured" and not keys:
                detail += " (no capture recorded: the backend ran the graph eagerly)"
            rows.append({"node": node.name, "op": node.op, "stream": node.stream, "category": category,
                         "detail": detail, "ge_ops": [[o.name, o.op] for o in ge_last],
                         "static_kernel": static_on if kernel else None,
                         "super_kernel": scopes.get(node.name)})
        counts = Counter(r["category"] for r in rows)
        totals.update(counts)
        lost = 0
        if ge and ge[0].file != ge[-1].file:
            later = snaps(ge[-1])
            lost = sum(later.get(o.name) is None for o in snaps(ge[0]).nodes)
        graphs.append({"graph": gid, "stage": final.name, "ge_stages": [ge[0].name, ge[-1].name] if ge else [],
                       "ge_ops_lost": lost, "captured": keys if aclgraph else None, "fell_back": fell, "nodes": rows,
                       "totals": {c: counts[c] for c in CATEGORIES if counts[c]}})
    backend = (led.index.backend or {}).get("name")
    stat = (cross_check(led, sum(g["ge_ops_lost"] for g in graphs), backend) if not aclgraph else
            {"file": None, "status": "not applicable", "note": f"{mode} compiles no GE graph: GE writes no statistics"})
    return {"run": led.index.run_id, "mode": mode.value if mode else "", "static_kernel_option": option,
            "static_kernels": static_on, "graphs": graphs, "totals": {c: totals[c] for c in CATEGORIES if totals[c]},
            "compile_stat": stat}

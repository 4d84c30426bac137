"""Per-stream core limits that together exceed the device (rule ``core_limits_exceed_device``, R20).

The torch-npu 2.13.0 wheel's npugraph_ex lets ``limit_core_num(aic, aiv, stream=s)`` bound the cube
(AIC) and vector (AIV) cores of one stream; ``torch.npu.set_stream_limit(stream, cube, vector)`` is
what it runs. Streams that run together share the chip: when their limits add up to more than it has,
nothing fails, the kernels just wait for cores and the streams serialise (the "multi-stream core
budget" case in TorchAir's npugraph_ex docs, ``docs/zh/npugraph_ex/advanced/limit_core_num.md``, and
TorchAir's own deadlock check, which adds the vector cores of concurrent tasks against the device's
``vector_core_num``: reference/torchair.md §2.4). Cube and vector cores are counted separately.

What the installed wheel puts in the graph (read from ``torch_npu/dynamo/npugraph_ex``):

- before the aclgraph passes, a scope: ``npugraph_ex.scope_enter(keys, values)`` with keys
  ``_op_aicore_num`` and ``_op_vectorcore_num`` (TorchAir's ``torchair.scope.limit_core_num``: the
  same keys under ``air.``); with ``stream=`` also ``_op_stream_stream_id`` /
  ``_op_stream_device_index`` / ``_op_stream_device_type`` (the stream's id, or the
  ``DEFAULT_STREAM_ID_MARKER`` words for the graph's entry stream); without, the stream in force at
  the scope;
- after ``replace_core_limit_nodes``, ``torch.npu.set_stream_limit(stream_node, aic, aiv)`` calls on a
  ``torch.npu.current_stream()`` node or a ``torch.npu.Stream(stream_id=...)`` node (the restore at the
  scope's end passes the saved limits, not numbers).

A stream id is matched to its label through the ``_user_stream_id`` of the stream scopes
npugraph_ex's ``replace_stream_event`` writes. :func:`stream_core_limits` is what the predictor reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airctl.graph.model import Graph, Node, stream_word
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.plan import FxPlan, build_plan, node_args, ref_name, scope_keys_values
from airctl.verify.rules import RULES, make_finding

AIC, AIV = "_op_aicore_num", "_op_vectorcore_num"
STREAM_ID = "_op_stream_stream_id"
DEFAULT_MARKER = "DEFAULT_STREAM_ID_MARKER"


def _int(value: Any) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _labels_by_id(plan: FxPlan) -> dict[str, str]:
    """``_user_stream_id`` -> the stream label of the scope that carries it."""
    found: dict[str, str] = {}
    for scope in plan.scopes:
        keys, values = scope_keys_values(plan.nodes[scope.enter])
        if isinstance(keys, list) and isinstance(values, list) and scope.label is not None:
            attrs = dict(zip(keys, values, strict=False))
            if "_user_stream_id" in attrs:
                found[str(attrs["_user_stream_id"])] = scope.label
    return found


def _limit_sites(plan: FxPlan) -> list[tuple[Node, str | None, int, int]]:
    """Each place a core limit is set: (node, stream label or None, aic, aiv), in node order. The scopes
    are the plan's (no walk over every node); ``set_stream_limit`` calls are looked for only when the
    graph has them."""
    nodes = plan.nodes
    found: list[tuple[int, Node, str | None, int, int]] = []
    by_id: dict[str, str] | None = None

    def label_of(stream_id: str) -> str | None:
        nonlocal by_id
        if stream_id == DEFAULT_MARKER:
            return None
        by_id = _labels_by_id(plan) if by_id is None else by_id
        return by_id.get(stream_id, f"stream id {stream_id}")

    for scope in plan.scopes:
        node = nodes[scope.enter]
        keys, values = scope_keys_values(node)
        if not (isinstance(keys, list) and isinstance(values, list) and AIC in keys and AIV in keys):
            continue
        attrs = dict(zip(keys, values, strict=False))
        aic, aiv = _int(attrs.get(AIC)), _int(attrs.get(AIV))
        if aic is None or aiv is None:
            continue
        label = attrs.get("_user_stream_label")
        stream = (str(label) if label is not None else plan.stream[scope.enter] if STREAM_ID not in attrs
                  else label_of(str(attrs[STREAM_ID])))
        found.append((scope.enter, node, stream, aic, aiv))
    if any(op.endswith("set_stream_limit") for op in plan.ops):
        for i, node in enumerate(nodes):
            if not node.op.endswith("set_stream_limit"):
                continue
            args = node_args(node)
            aic, aiv = (_int(args[1]), _int(args[2])) if len(args) >= 3 else (None, None)
            if aic is None or aiv is None or isinstance(args[1], str) and args[1].startswith("%"):
                continue  # the restore: the saved limits, not numbers
            found.append((i, node, _stream_node_label(plan, ref_name(args[0]), label_of), aic, aiv))
    return [site[1:] for site in sorted(found, key=lambda site: site[0])]


def _stream_node_label(plan: FxPlan, name: str | None, label_of: Callable[[str], str | None]) -> str | None:
    node = plan.graph.get(name) if name else None
    if node is None:
        return None
    kwargs = node.attrs.get("kwargs") if isinstance(node.attrs.get("kwargs"), dict) else {}
    if "stream_id" in kwargs:
        return label_of(str(kwargs["stream_id"]))
    return plan.stream[plan.index[node.name]]  # current_stream(): the stream in force where it is called


def stream_core_limits(graph: Graph, mode: Mode = Mode.NPUGRAPH_EX) -> dict[str | None, tuple[int, int]]:
    """The core limit of each limited stream (None: the default stream) as ``(aic, aiv)``; a stream
    limited more than once keeps the largest of each (what it can take at most)."""
    return _per_stream(_limit_sites(build_plan(graph, mode)))[0]


def _per_stream(sites: list[tuple[Node, str | None, int, int]]) \
        -> tuple[dict[str | None, tuple[int, int]], dict[str | None, Node]]:
    """Each stream's largest (aic, aiv), and the node that first limits it."""
    limits: dict[str | None, tuple[int, int]] = {}
    first: dict[str | None, Node] = {}
    for node, stream, aic, aiv in sites:
        old = limits.get(stream, (0, 0))
        limits[stream] = (max(old[0], aic), max(old[1], aiv))
        first.setdefault(stream, node)
    return limits, first


def device_cores(name: str | None = None) -> tuple[int, int, str]:
    """(cube cores, vector cores, device name) of ``name`` from the device table
    (:mod:`airctl.devices`); a coupled chip has one pool, which both kinds of limit share."""
    from airctl.devices import device

    dev = device(name)
    vector = dev.cube_cores if getattr(dev, "coupled", False) else dev.vector_cores
    return int(dev.cube_cores), int(vector), dev.name


def core_limit_findings(plan: FxPlan, mode: Mode, device: str | None = None) -> list[Finding]:
    """One finding when the per-stream limits add up past the device's cube or vector cores (each
    kind counted on its own)."""
    if RULES["core_limits_exceed_device"].severity(mode) is None:  # not a rule of this mode
        return []
    sites = _limit_sites(plan)
    if not sites:
        return []
    limits, first = _per_stream(sites)
    cube, vector, name = device_cores(device)
    over = []
    for k, (kind, total) in enumerate((("cube (AIC)", cube), ("vector (AIV)", vector))):
        asked = sum(v[k] for v in limits.values())
        if asked > total:
            parts = ", ".join(f"{stream_word(s)} {v[k]}" for s, v in limits.items())
            over.append(f"{kind} limits add up to {asked} ({parts}), more than its {total}")
    if not over:
        return []
    fit = {s: tuple(max(1, v[k] * total // max(total, sum(w[k] for w in limits.values())))
                    for k, total in enumerate((cube, vector))) for s, v in limits.items()}
    hint = (f"lower the limits so the streams that run together fit {name}'s {cube} cube and {vector} vector "
            "cores, e.g.\n" + "\n".join(f"with npugraph_ex.scope.limit_core_num({a}, {v}, stream={_py(s)}):"
                                         for s, (a, v) in fit.items())
            + "\nor, in the pass file, each limit_core_num pass: " + "; ".join(
                f"{stream_word(s)}: {{aicore_num: {a}, vectorcore_num: {v}}}" for s, (a, v) in fit.items()))
    f = make_finding("core_limits_exceed_device", mode,
                     f"per-stream core limits exceed {name} (device table): " + "; ".join(over)
                     + ": the streams serialise on the cores they share",
                     [first[s].name for s in limits], plan.graph, hint=hint)
    return [f] if f is not None else []


def _py(stream: str | None) -> str:
    return "torch.npu.current_stream()" if stream is None else f"<the stream of {stream!r}>"

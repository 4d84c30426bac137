"""Collapse a graph into one box per module (or per run of a stream) so that big graphs can be looked at.

A 50k-node graph drawn node by node is a texture, not a picture. Folding it by ``nn.Module`` path
(``layers.3.mlp``) or by stream runs gives a few hundred boxes that Graphviz lays out well, with the
multi-stream structure intact: ``air.*`` nodes (scopes, record, wait) are never folded, so every
record→wait edge and stream switch stays visible.

- ``by="module"``: key = the first ``depth`` parts of the node's module path, plus its stream;
  nodes without a module path group as ``(inputs)``, ``(outputs)`` or ``(top)``.
- ``by="stream"``: consecutive nodes (file order) on the same stream form one box: each
  ``scope_enter … scope_exit`` range becomes a box on its stream.

Scope markers (``scope_enter``/``scope_exit``) are dropped (the stream is on the nodes inside), and
record/wait nodes keep their program order on their stream as *order* edges
(:mod:`airctl.render.order`), listed in ``meta["order_after"]`` (the graph's
``attrs["program_order"]`` is ``"explicit"``): a record follows the group before it, the group
after a wait follows the wait. They are not control edges: the folded graph gains no ordering
that the original did not have.

The result is an ordinary :class:`~airctl.graph.model.Graph` (dialect kept), so every writer and
renderer takes it. A box's ``attrs`` hold ``nodes`` (how many it folds) and ``ops`` (the most
frequent op types with counts).

>>> from airctl.graph.model import Node
>>> g = Graph("g", "fx", [Node("x", "placeholder", kind="placeholder"),
...                       Node("a", "aten.mm.default", ["x", "x"], module="blk.attn"),
...                       Node("b", "aten.add.Tensor", ["a"], module="blk.attn"),
...                       Node("c", "aten.relu.default", ["b"], module="blk.mlp")])
>>> [(n.name, n.inputs) for n in collapse(g, "module", depth=2).nodes]
[('(inputs)', []), ('blk.attn', ['(inputs)']), ('blk.mlp', ['blk.attn'])]
"""

from __future__ import annotations

from collections import Counter

from airctl.errors import AirctlError
from airctl.graph.model import Graph, Node
from airctl.graph.roles import air_name
from airctl.render.order import EXPLICIT

MODES = ("module", "stream")
INPUT_KINDS = {"placeholder", "get_attr", "Data", "Const", "Constant", "Variable"}
TOP_OPS = 5


def _air(node: Node) -> str | None:
    return air_name(node.op.removeprefix("torch.ops."))


def _kept(node: Node) -> bool:
    """Record/wait nodes are never folded: they are the sync structure."""
    air = _air(node)
    return air is not None and ("record" in air or "wait" in air)


def _dropped(node: Node) -> bool:
    """Scope markers carry no data; their stream is already on the nodes inside."""
    return _air(node) in ("scope_enter", "scope_exit")


def _module_key(node: Node, depth: int) -> str:
    if node.module:
        return ".".join(node.module.split(".")[:depth])
    if node.kind in INPUT_KINDS or node.op in INPUT_KINDS:
        return "(inputs)"
    if node.kind == "output" or node.op in ("output", "NetOutput"):
        return "(outputs)"
    return "(top)"


def _keys(graph: Graph, by: str, depth: int) -> list[str]:
    keys: list[str] = []
    run = 0
    previous: tuple[str | None, bool] | None = None
    for node in graph.nodes:
        if _kept(node) or _dropped(node):
            keys.append(node.name)
            previous = None
            continue
        if by == "module":
            base = _module_key(node, depth)
            keys.append(base if node.stream is None else f"{base} @{node.stream}")
        else:
            here = (node.stream, node.kind in INPUT_KINDS or node.op in INPUT_KINDS)
            if here != previous:
                run += 1
                previous = here
            label = "inputs" if here[1] else (node.stream or "default")
            keys.append(f"{label} #{run}")
    return keys


def collapse(graph: Graph, by: str = "module", depth: int = 2) -> Graph:
    """The graph with one node per group (see the module docstring); ``air.*`` nodes kept as they are."""
    if by not in MODES:
        raise AirctlError(f"cannot collapse by {by!r}", hint=f"choose one of: {', '.join(MODES)}")
    if depth < 1:
        raise AirctlError(f"--depth must be at least 1, got {depth}")
    keys = _keys(graph, by, depth)
    key_of = {node.name: key for node, key in zip(graph.nodes, keys, strict=True)}
    members: dict[str, list[Node]] = {}
    for node, key in zip(graph.nodes, keys, strict=True):
        members.setdefault(key, []).append(node)
    for node in graph.nodes:
        if _dropped(node):
            del key_of[node.name]  # nothing reads a scope marker's value; never an edge end
    taken = {n.name for n in graph.nodes if _kept(n)}
    order = _program_order(graph, keys)
    out: list[Node] = []
    for key, nodes in members.items():
        if len(nodes) == 1 and _dropped(nodes[0]):
            continue
        if len(nodes) == 1 and nodes[0].name in taken:
            kept = nodes[0]
            meta = dict(kept.meta)
            if key in order:
                meta["order_after"] = order[key]
            out.append(Node(kept.name, kept.op, _refs(kept.inputs, key_of, key),
                            _refs(kept.control_inputs, key_of, key), dict(kept.attrs), kept.stream, kept.source,
                            kept.module, kept.kind, meta))
            continue
        inputs = _refs([r for n in nodes for r in n.inputs], key_of, key)
        control = [r for r in _refs([r for n in nodes for r in n.control_inputs], key_of, key) if r not in inputs]
        ops = Counter(n.op for n in nodes)
        first = nodes[0]
        out.append(Node(
            key, f"{len(nodes)} ops" if len(nodes) > 1 else first.op, inputs, control,
            {"nodes": len(nodes), "ops": dict(ops.most_common(TOP_OPS))}, first.stream,
            first.source, first.module if by == "module" else None, "group",
            {"folded": [n.name for n in nodes[:20]], **({"order_after": order[key]} if key in order else {})}))
    return Graph(f"{graph.name} (by {by})", graph.dialect, out, {**graph.attrs, "program_order": EXPLICIT})


def _program_order(graph: Graph, keys: list[str]) -> dict[str, list[str]]:
    """Order edges (``meta["order_after"]``) that pin record/wait nodes to their place on their stream
    once groups are folded: a record follows the group before it on its stream; the group after a
    wait on that stream follows the wait, unless that group began before the wait (a module whose
    ops come on both sides of it), in which case the wait follows the group before it.
    """
    extra: dict[str, list[str]] = {}
    last_group: dict[str | None, str] = {}
    pending_waits: dict[str | None, list[tuple[str, str | None]]] = {}  # stream -> (wait, group before it)
    first: dict[str, int] = {}  # group -> position of its first member
    for pos, (node, key) in enumerate(zip(graph.nodes, keys, strict=True)):
        if _dropped(node):
            continue
        first.setdefault(key, pos)
        if _kept(node):
            before = last_group.get(node.stream)
            if before is not None and "record" in (_air(node) or ""):
                extra.setdefault(key, []).append(before)
            if "wait" in (_air(node) or ""):
                pending_waits.setdefault(node.stream, []).append((key, before))
            continue
        for wait, before in pending_waits.pop(node.stream, []):
            if first[key] > first[wait]:  # the group starts after the wait: it follows the wait
                extra.setdefault(key, []).append(wait)
            elif before is not None:  # a module group around the wait: the wait follows what came before it
                extra.setdefault(wait, []).append(before)
        last_group[node.stream] = key
    return extra


def _refs(refs: list[str], key_of: dict[str, str], own: str) -> list[str]:
    """Producers as group names, each once, without the group itself."""
    seen: dict[str, None] = {}
    for ref in refs:
        key = key_of.get(Node.producer(ref))
        if key is not None and key != own:
            seen.setdefault(key, None)
    return list(seen)

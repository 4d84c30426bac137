"""Program order as part of the picture: "order" edges that pin side-effect nodes to the ops around them.

``air.scope_enter``, ``air.record``, ``air.scope_exit`` have no data edges and ``air.wait`` has only
its sync edge, so a layout that ranks by data edges alone draws them in the top row, far from the
ops they order. What they mean is *where they sit in program order on their stream*, so every
renderer (dot, airctl's layered layout, report.html, ``--collapse``) adds a light **order** edge
between each such node and its program-order neighbours on its stream, and ranks by it:

- a node *tied before* the op it precedes (``scope_enter``, ``wait``, tagged waits) sits directly
  above it: the edge to its next neighbour is its **anchor**, and the layouts pull it down to just
  above that op (:attr:`Order.pull`);
- every other tied node (``record``, ``scope_exit``, a node with no data edges) sits directly under
  the op it follows: the edge from its previous neighbour is its anchor.

When the preferred neighbour is missing (a wait at the tail of its stream, a record before any
op), the other edge becomes the anchor, so the picture shows the very mistake the verifier reports.
Edges that are not anchors still constrain the ranks (program order on the stream) but pull less
(``weight``). A ``scope_enter`` belongs to the stream it opens (:func:`display_streams`), so it is
drawn with that stream's colour and inside its cluster.

Tied: every ``air.*`` node, and any other node with no data edges (FX; in GE, one with no data
and no control edges, since GE already orders with control edges). Inputs and the output are
never tied and never neighbours. A collapsed graph (:mod:`airctl.render.collapse`) says its
program order explicitly: ``attrs["program_order"] == "explicit"`` and each node's
``meta["order_after"]`` names the nodes it follows.

>>> from airctl.graph.model import Graph, Node
>>> g = Graph("g", "fx", [Node("x", "placeholder", kind="placeholder"),
...     Node("enter", "air.scope_enter.default", attrs={"args": [["_user_stream_label"], ["s1"]]}),
...     Node("mm", "aten.mm.default", ["x", "x"], stream="s1"),
...     Node("rec", "air.record.default", stream="s1"),
...     Node("exit", "air.scope_exit.default", stream="s1"),
...     Node("wait", "air.wait.default", ["rec"]),
...     Node("sub", "aten.sub.Tensor", ["x", "mm"]),
...     Node("output", "output", ["sub"], kind="output")])
>>> o = program_order(g)
>>> [(g.nodes[s].name, g.nodes[d].name, w) for s, d, w in o.edges]
[('enter', 'mm', 10), ('mm', 'rec', 10), ('rec', 'exit', 10), ('wait', 'sub', 10)]
>>> sorted(g.nodes[i].name for i in o.pull), o.streams[1]
(['enter', 'wait'], 's1')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain

from airctl.graph.model import Graph, Node
from airctl.graph.refs import Refs
from airctl.graph.roles import Role, air_name, role_of_op
from airctl.io.fx_reader import scope_stream
from airctl.verify.plan import scope_keys_values

ANCHOR = 10  # dot weight of an anchor edge: the tied node sits right next to that op
CONSTRAINT = 1  # weight of the other order edges: program order on the stream, little pull
BEFORE = frozenset({Role.SCOPE_ENTER, Role.WAIT, Role.TAGGED_WAIT})
_ENDS = (Role.INPUT, Role.OUTPUT)  # graph inputs and the output: never tied
EXPLICIT = "explicit"  # graph.attrs["program_order"] of a graph that lists its order edges in meta


@dataclass
class Order:
    edges: list[tuple[int, int, int]] = field(default_factory=list)  # (src index, dst index, weight)
    pull: set[int] = field(default_factory=set)  # nodes laid out directly above their successor
    streams: list[str | None] = field(default_factory=list)  # the stream each node is drawn on

    def pairs(self) -> list[tuple[int, int]]:
        return [(s, d) for s, d, _ in self.edges]


def display_streams(graph: Graph, roles: list[Role] | None = None) -> list[str | None]:
    """Each node's stream as drawn: its own, except that a ``scope_enter`` takes the stream it opens."""
    roles = roles or [role_of_op(n.op, n.kind) for n in graph.nodes]
    out = [n.stream for n in graph.nodes]
    enter = Role.SCOPE_ENTER
    for i, role in enumerate(roles):
        if role is enter:
            label = scope_stream(scope_keys_values(graph.nodes[i]))  # the stream it opens
            if label is not None:
                out[i] = label
    return out


def _no_data_edges(graph: Graph, refs: Refs, skip: list[bool]) -> list[bool]:
    """Per node: True when no data edge starts or ends at it (nodes marked in ``skip`` are not asked).

    Linear, with each distinct input reference resolved once: building :meth:`Graph.edges` for a
    50k-node graph costs more than the rest of the picture."""
    nodes = graph.nodes
    data_in = refs.data_inputs(graph)
    produced = set(chain.from_iterable(data_in))
    used = {nodes[j].name for j in produced if j >= 0}  # the names some input reference names
    out = [False] * len(nodes)
    for i, node in enumerate(nodes):
        if skip[i] or node.name in used:
            continue
        out[i] = max(data_in[i], default=-1) < 0
    return out


def program_order(graph: Graph) -> Order:
    """The order edges of ``graph`` (see the module docstring); linear in nodes plus edges."""
    nodes = graph.nodes
    refs = Refs.of(graph)  # each distinct reference parsed once (the graph's pinned table, if any)
    index = refs.index
    roles = [role_of_op(n.op, n.kind) for n in nodes]
    order = Order(streams=display_streams(graph, roles))
    if graph.attrs.get("program_order") == EXPLICIT:
        return _explicit(graph, index, roles, order)
    air_ops = {op for op in {n.op for n in nodes} if air_name(op) is not None}  # each distinct op once
    air = [n.op in air_ops for n in nodes]
    skip = [a or r in _ENDS for a, r in zip(air, roles, strict=True)]
    lonely = _no_data_edges(graph, refs, skip)
    tied = [a and r not in _ENDS for a, r in zip(air, roles, strict=True)]
    if any(lonely):
        controlled = {Node.producer(r) for n in nodes for r in n.control_inputs} if graph.dialect == "ge" else set()
        for i, node in enumerate(nodes):
            if lonely[i]:
                tied[i] = graph.dialect != "ge" or not (node.control_inputs or node.name in controlled)
    if not any(tied):
        return order
    last: dict[str | None, int] = {}
    prev_edge: dict[int, int] = {}  # tied node -> position of the edge from its previous neighbour
    next_edge: dict[int, int] = {}
    inputs = Role.INPUT
    for i, role in enumerate(roles):
        if role is inputs:
            continue
        lane = order.streams[i]
        p = last.get(lane)
        if p is not None and (tied[i] or tied[p]):
            if tied[i]:
                prev_edge[i] = len(order.edges)
            if tied[p]:
                next_edge[p] = len(order.edges)
            order.edges.append((p, i, CONSTRAINT))
        last[lane] = i
    for i in range(len(nodes)):
        if not tied[i]:
            continue
        before = roles[i] in BEFORE
        want, other = (next_edge, prev_edge) if before else (prev_edge, next_edge)
        at = want.get(i, other.get(i))
        if at is not None:
            s, d, _ = order.edges[at]
            order.edges[at] = (s, d, ANCHOR)
        if before and i in next_edge:
            order.pull.add(i)
    return order


def _explicit(graph: Graph, index: dict[str, int], roles: list[Role], order: Order) -> Order:
    for d, node in enumerate(graph.nodes):
        for name in node.meta.get("order_after") or []:
            s = index.get(str(name))
            if s is not None and s != d:
                order.edges.append((s, d, ANCHOR))
                if roles[s] in BEFORE:
                    order.pull.add(s)
    return order


def stream_scopes(graph: Graph, streams: list[str | None]) -> tuple[list[str], list[int]]:
    """The stream each stream scope of an FX graph opens and, per node, the innermost open scope drawn
    on its stream (its index, ``-1`` for none): what the SVG draws as bands."""
    scopes: list[str] = []
    member = [-1] * len(graph.nodes)
    stack: list[int] = []  # open scopes (index into scopes), innermost last; -1 for a non-stream scope
    for i, node in enumerate(graph.nodes):
        air = air_name(node.op)
        if air == "scope_enter":
            label = scope_stream(scope_keys_values(node))
            if label is None:
                stack.append(-1)
                continue
            scopes.append(label)
            stack.append(len(scopes) - 1)
            member[i] = len(scopes) - 1
            continue
        for k in reversed(stack):
            if k >= 0 and scopes[k] == streams[i]:
                member[i] = k
                break
        if air == "scope_exit" and stack:
            k = stack.pop()
            if k >= 0:
                member[i] = k
    return scopes, member

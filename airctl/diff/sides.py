"""One graph as the matcher sees it: integer arrays of ops, inputs and users, plus the pairing so far.

The matcher (:mod:`airctl.diff.match`) walks edges millions of times on a 50k-node graph, so each
side is turned once into flat lists indexed by node position: ``op`` (an interned int shared by
both sides, so ops compare as ints), ``data_in`` (producer per input slot, ``-1`` for a reference
to no node), ``ctrl_in``, and the reverse lists ``users``/``user_slot`` (data) and ``ctrl_users``.
``pair[i]`` is the node of the other side that ``i`` is paired with, or ``-1``. The report
(:mod:`airctl.diff.report`) reads ``data_in``, ``ctrl_in``, ``pair``, ``index`` and ``nodes``.
"""

from __future__ import annotations

import re
from typing import Any

from airctl.graph.model import Graph
from airctl.graph.refs import Refs

_REF = re.compile(r"'%[^']*'")
# what a scope pass sets on every op inside it (TorchAir's scope keys, docs/passes.md): placement, not
# identity, so a source is not anchored by them (a Const moved to another stream is still that Const)
SCOPE_ATTRS = frozenset({"_user_stream_label", "_user_stream_priority", "_enable_inner_parallel", "_op_aicore_num",
                         "_op_vectorcore_num", "_super_kernel_scope", "_super_kernel_options",
                         "_op_exec_never_timeout"})
_NONE: list[int] = []  # shared by the nodes without control edges; never mutated


class Side:
    """One graph of the pair, as arrays (see the module docstring)."""

    def __init__(self, graph: Graph, ops: dict[str, int]) -> None:
        nodes = graph.nodes
        self.nodes = nodes
        self.dialect = graph.dialect
        n = self.n = len(nodes)
        refs = Refs.of(graph)  # each distinct input reference is parsed once (the graph's pinned table, if any)
        self.index = refs.index
        intern = ops.setdefault
        self.op = [intern(node.op, len(ops)) for node in nodes]
        self.ops = ops  # op name -> its int (both sides share the table)
        # control edges are rare: nodes without any share one empty list (never appended to)
        self.data_in, self.ctrl_in = refs.inputs(graph)  # shared with the graph's other readers: read only
        users: list[list[int]] = [[] for _ in range(n)]
        slots: list[list[int]] = [[] for _ in range(n)]
        for i, ins in enumerate(self.data_in):
            for slot, p in enumerate(ins):
                if p >= 0:
                    users[p].append(i)
                    slots[p].append(slot)
        ctrl_users: list[list[int]] = [_NONE] * n
        for i, ins in enumerate(self.ctrl_in):
            for p in ins:
                if p >= 0:
                    if ctrl_users[p] is _NONE:
                        ctrl_users[p] = []
                    ctrl_users[p].append(i)
        self.users, self.user_slot, self.ctrl_users = users, slots, ctrl_users
        self.pair = [-1] * n
        self._attr: dict[int, int] = {}

    def attr_key(self, i: int) -> int:
        """A hash of node ``i``'s attributes with input references (FX ``"%mm"``) masked; cached."""
        key = self._attr.get(i)
        if key is None:
            attrs = self.nodes[i].attrs
            key = self._attr[i] = attr_hash(attrs) if attrs else 0
        return key

    def identity_key(self, i: int) -> int:
        """:meth:`attr_key` without the scope attributes (:data:`SCOPE_ATTRS`): what a node *is*."""
        attrs = self.nodes[i].attrs
        if not attrs or SCOPE_ATTRS.isdisjoint(attrs):
            return self.attr_key(i)
        return attr_hash({k: v for k, v in attrs.items() if k not in SCOPE_ATTRS})

    def unmatched(self) -> list[int]:
        pair = self.pair
        return [i for i in range(self.n) if pair[i] < 0]


class Sides:
    """The sides of a chain of diffs (stage k is diffed with k-1, then with k+1): a graph's arrays are
    built once for both diffs it takes part in, and every side shares one op table. Only the sides of
    the last pair are kept."""

    def __init__(self) -> None:
        self.ops: dict[str, int] = {}
        self._last: list[tuple[Graph, Side]] = []

    def pair(self, a: Graph, b: Graph) -> tuple[Side, Side]:
        """Fresh sides (nothing paired) of ``a`` and ``b``."""
        def side(graph: Graph, taken: Side | None) -> Side:
            for held, s in self._last:
                if held is graph and s is not taken and s.nodes is graph.nodes and s.n == len(graph.nodes):
                    s.pair = [-1] * s.n
                    return s
            return Side(graph, self.ops)

        sa = side(a, None)
        sb = side(b, sa)
        self._last = [(a, sa), (b, sb)]
        return sa, sb


def attr_hash(attrs: dict[str, Any]) -> int:
    text = repr(sorted(attrs.items(), key=lambda kv: kv[0]))
    # FX args name their inputs ("%mm"); those names change with renumbering, so they are masked
    return hash(_REF.sub("'%'", text) if "'%" in text else text)

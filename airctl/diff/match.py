"""Match the nodes of two graphs by structure, so a diff survives renumbered names, reordered nodes and edits.

Names are unreliable across dumps: GE numbers ops per graph (``Add_1`` becomes ``Add_2`` when an
earlier ``Add`` appears) and FX renumbers on every retrace (``mm`` -> ``mm_1``). Real graphs are
also the same layer repeated 32 or 80 times, so a node's op and neighbourhood do not identify
it either: only its *place in the structure* does. The matcher therefore pairs nodes by walking
the two graphs side by side, in rounds that run until nothing new pairs:

1. **anchors** (:func:`~airctl.diff.anchors.seed`): ops that occur once on each side
   (``NetOutput``, FX ``output``) and sources alone with their op and attributes (GE ``Data``);
   then, in GE graphs, **provenance** (:func:`~airctl.diff.provenance.by_fx_node`): ops converted
   from the same FX node, so structurally identical subgraphs (two experts, repeated layers)
   are told apart by where they came from, not paired crosswise;
2. **propagation** (:mod:`~airctl.diff.propagate`): from every new pair along data edges in both
   directions, the k-th input with the k-th input, a user with the user of the same op reading
   the same slot, same op only, nothing contradicting an earlier pair. Layer k pairs with layer k
   because the walk follows the chain, and it stops exactly at an edit;
3. **evidence** (:mod:`~airctl.diff.evidence`): around the nodes where the walk stopped only,
   candidates scored by their paired neighbours: an op changed in place (paired neighbours on
   both sides), same-op siblings told apart by their other neighbours, reordered inputs. Names
   and then file position break ties between structurally identical candidates only;
4. fallbacks where the edges give nothing to walk along: unique neighbourhood signatures in a
   region no anchor reached, program order for nodes without a paired neighbour (FX
   ``record``/``wait``/``scope`` nodes), and last, in GE graphs, TorchAir's own op names
   (:func:`~airctl.diff.provenance.by_ge_name`: an unused ``Const`` has no edge to walk along).

Whatever stays unpaired is added (in ``b``) or removed (from ``a``). Every round touches only
the nodes next to the last round's new pairs, so the whole match is linear in the graph size
plus the size of the edited regions.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from airctl.diff.anchors import seed, sequence, signatures, unique_ops
from airctl.diff.evidence import evidence_round
from airctl.diff.propagate import Pairing, propagate
from airctl.diff.provenance import by_fx_node, by_ge_name
from airctl.diff.sides import Side, Sides
from airctl.graph.model import Graph

RULES = ("anchor", "provenance", "neighbours", "evidence", "same-place", "signature", "order", "name")  # .how


class Matching:
    """Pairs of node names (a -> b) and the rule that paired each (one of :data:`RULES`). The matcher's
    own result keeps its index arrays (``sides``, for reports) and builds the name maps on first use:
    a report of two 50k-node graphs reads them only for the few changed nodes."""

    def __init__(self, a_to_b: dict[str, str] | None = None, how: dict[str, str] | None = None,
                 sides: tuple[Any, Any] | None = None, rules: dict[int, str] | None = None) -> None:
        self._a_to_b, self._how = a_to_b, how
        self.sides = sides  # (a, b) Side arrays, with ``pair`` filled in
        self._rules = rules  # a-side index -> rule, for every paired a-side node
        # the lists themselves: a chain of diffs gives a reused Side a new ``pair`` list (Sides.pair)
        self._held = None if sides is None else (sides[0].nodes, sides[0].pair, sides[1].nodes)

    @property
    def a_to_b(self) -> dict[str, str]:
        if self._a_to_b is None:
            nodes_a, pair, nodes_b = self._held or ([], [], [])
            self._a_to_b = {node.name: nodes_b[j].name for node, j in zip(nodes_a, pair, strict=True) if j >= 0}
        return self._a_to_b

    @property
    def how(self) -> dict[str, str]:
        if self._how is None:
            nodes = self._held[0] if self._held is not None else []
            self._how = {nodes[i].name: rule for i, rule in (self._rules or {}).items()}
        return self._how

    @property
    def b_to_a(self) -> dict[str, str]:
        return {b: a for a, b in self.a_to_b.items()}

    def rule_counts(self) -> dict[str, int]:
        """How many pairs each rule made."""
        return dict(Counter((self._rules if self._rules is not None else self.how).values()))

    def __repr__(self) -> str:
        return f"Matching({len(self.a_to_b)} pairs)"


def match_graphs(a_graph: Graph, b_graph: Graph, sides: Sides | None = None) -> Matching:
    """Pair the nodes of ``a_graph`` with those of ``b_graph`` (see the module docstring); ``sides``:
    the arrays of a chain of diffs, reused for a graph diffed before."""
    if sides is None:
        ops: dict[str, int] = {}
        a, b = Side(a_graph, ops), Side(b_graph, ops)
    else:
        a, b = sides.pair(a_graph, b_graph)
    p = Pairing(a, b)
    seed(p)
    by_fx_node(p)
    while not p.done:
        propagate(p)
        if p.done:
            break
        if p.stuck:
            p.retry_stuck()
            if propagate(p):
                continue
        if evidence_round(p) or unique_ops(p) or signatures(p) or sequence(p) or by_ge_name(p):
            continue
        break
    return Matching(sides=(a, b), rules=p.how)

"""Pair GE ops by where they came from, before structure can pair them crosswise.

Two identical experts are the same structure twice: moving expert e1 off a side stream and e0
onto it, a structural walk alone pairs e0's ops with e1's (both are "the MatMulV2 after a
Transpose of a Data"), and the run-against-run diff would report stream changes on the wrong
nodes, an attribute change on a Const that was only renamed, and one edge both added and removed.
A GE graph says where each op came from:

- :func:`by_fx_node`: the FX node a GE op was converted from (``meta.fx_tensor_names``, TorchAir's
  ``_fx_tensor_name`` output attribute: ``addmm_1-aten.addmm.default.OUTPUT.0``). Ops whose op
  and FX tensor names are the same on both sides, and unique there, pair first: structure then
  grows the pairing from them (the Consts and Identities the converter added have no FX name).
- :func:`by_ge_name`: what structure leaves, TorchAir's own op naming (``Const_2``: the op type
  and a count in conversion order) pairs same-op ops of the same name, last of all (an unused
  Const has no edge to walk along).

Both apply to GE graphs only; FX node names are renumbered by retracing and paired by structure.

>>> from airctl.graph.model import Graph, Node
>>> def ge(*nodes): return Graph(name="g", dialect="ge", nodes=list(nodes))
>>> mm = lambda name, fx: Node(name=name, op="MatMulV2", meta={"fx_tensor_names": [fx]})
>>> from airctl.diff.match import match_graphs
>>> m = match_graphs(ge(mm("MatMulV2", "mm-a"), mm("MatMulV2_1", "mm_1-a")),
...                  ge(mm("MatMulV2", "mm_1-a"), mm("MatMulV2_1", "mm-a")))
>>> m.a_to_b, m.how["MatMulV2"]
({'MatMulV2': 'MatMulV2_1', 'MatMulV2_1': 'MatMulV2'}, 'provenance')
"""

from __future__ import annotations

from airctl.diff.propagate import Pairing
from airctl.diff.sides import Side
from airctl.graph.model import FX_NAMES


def _is_ge(side: Side) -> bool:
    return side.dialect == "ge"


def _fx_keys(side: Side) -> list[tuple[tuple, int]]:
    """The unpaired nodes that carry FX tensor names, each keyed by its op and those names."""
    out: list[tuple[tuple, int]] = []
    for i, node in enumerate(side.nodes):
        names = node.meta.get(FX_NAMES) if node.meta else None
        if names and side.pair[i] < 0:
            out.append(((side.op[i], tuple(sorted(map(str, names)))), i))
    return out


def by_fx_node(p: Pairing) -> int:
    """Pair GE ops converted from the same FX node (see the module docstring)."""
    if not (_is_ge(p.a) and _is_ge(p.b)):
        return 0
    return p.link_unique(_fx_keys(p.a), _fx_keys(p.b), "provenance")


def by_ge_name(p: Pairing) -> int:
    """Pair unpaired GE ops of the same op and the same TorchAir name (see the module docstring)."""
    if not (_is_ge(p.a) and _is_ge(p.b)):
        return 0
    a, b = p.a, p.b
    made = 0
    for i in a.unmatched():
        j = b.index.get(a.nodes[i].name, -1)
        if j >= 0 and b.pair[j] < 0 and a.op[i] == b.op[j]:
            p.link(i, j, "name")
            made += 1
    return made

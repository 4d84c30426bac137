"""Input reference -> producer position, for code that resolves every input of a big graph.

A reference names its producer in a dialect's spelling (:meth:`Node.producer`): a plain name in
FX, ``name:0`` (the first output), ``name:k`` or ``^name`` (a control input) in GE. Parsing each
one costs a Python call; a 50k-node GE graph has ~40k distinct references and several readers
(the verifier, the report's edges, the lane view, the program order, the diff). :class:`Refs` is a
dict filled up front, in C, with the common spelling of every node, and it parses the rare other
spellings on first use.

>>> from airctl.graph.model import Graph, Node
>>> g = Graph("g", "ge", [Node("a", "Data"), Node("b", "Add", inputs=["a:0", "a:1"], control_inputs=["^a"])])
>>> refs = Refs.of(g)
>>> refs["a:0"], refs["a:1"], refs["^a"], refs["gone:0"]
(0, 0, 0, -1)
"""

from __future__ import annotations

import operator
from itertools import repeat

from airctl.graph.model import Graph, Node


class Refs(dict[str, int]):
    """Input reference -> producer position in ``index`` (name -> position), ``-1`` for no node;
    the same answer as ``index.get(Node.producer(ref), -1)``."""

    def __init__(self, index: dict[str, int], dialect: str) -> None:
        if dialect == "ge":  # "name:0" for every name; a name starting with "^" reads otherwise
            names = index if not any(k[:1] == "^" for k in index) else {k: v for k, v in index.items()
                                                                        if k[:1] != "^"}
            super().__init__(zip(map(operator.add, names, repeat(":0")), names.values(), strict=True))
        elif any(":" in k or "^" in k for k in index):  # a name that is not its own reference
            super().__init__((k, v) for k, v in index.items() if ":" not in k and k[:1] != "^")
        else:
            super().__init__(index)
        self.index = index

    @classmethod
    def of(cls, graph: Graph, index: dict[str, int] | None = None) -> Refs:
        """The references of ``graph`` (``index``: its name -> position map, when the caller has it)."""
        return cls(index if index is not None else {n.name: i for i, n in enumerate(graph.nodes)}, graph.dialect)

    def __missing__(self, ref: str) -> int:
        found = self[ref] = self.index.get(Node.producer(ref), -1)
        return found

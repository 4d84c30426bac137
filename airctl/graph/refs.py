"""Input reference -> producer position, for code that resolves every input of a big graph.

A reference names its producer in a dialect's spelling (:meth:`Node.producer`): a plain name in
FX, ``name:0`` (the first output), ``name:k`` or ``^name`` (a control input) in GE. Parsing each
one costs a Python call; a 50k-node GE graph has ~40k distinct references and several readers
(the verifier, the report's edges, the lane view, the program order, the diff). :class:`Refs` is a
dict filled up front, in C, with the common spelling of every node, and it parses the rare other
spellings on first use. Code that reads one graph several times (the report: its edges, program
order, lane view, verifier and diff) builds the table once: inside ``with pinned(graph)``,
:meth:`Refs.of` returns that one table, whose ``index`` (name -> position) every reader shares.

>>> from airctl.graph.model import Graph, Node
>>> g = Graph("g", "ge", [Node("a", "Data"), Node("b", "Add", inputs=["a:0", "a:1"], control_inputs=["^a"])])
>>> refs = Refs.of(g)
>>> refs["a:0"], refs["a:1"], refs["^a"], refs["gone:0"]
(0, 0, 0, -1)
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import repeat

from airctl.graph.model import Graph, Node

_NONE: list[int] = []  # the control inputs of the nodes without any; never mutated


class Refs(dict[str, int]):
    """Input reference -> producer position in ``index`` (name -> position), ``-1`` for no node;
    the same answer as ``index.get(Node.producer(ref), -1)``."""

    def __init__(self, index: dict[str, int], dialect: str) -> None:
        text = "".join(index)  # one scan in C for the rare characters, instead of a test per name
        if dialect == "ge":  # "name:0" for every name; a name starting with "^" reads otherwise
            names = index if "^" not in text or not any(k[:1] == "^" for k in index) else {
                k: v for k, v in index.items() if k[:1] != "^"}
            super().__init__(zip(map(operator.add, names, repeat(":0")), names.values(), strict=True))
        elif (":" in text or "^" in text) and any(":" in k or "^" in k for k in index):  # a name not its own reference
            super().__init__((k, v) for k, v in index.items() if ":" not in k and k[:1] != "^")
        else:
            super().__init__(index)
        self.index = index
        self._inputs: tuple[list[list[int]], list[list[int]]] | None = None

    def inputs(self, graph: Graph) -> tuple[list[list[int]], list[list[int]]]:
        """Per node of ``graph`` (the graph of this table), the producer position of each data input and
        of each control input, ``-1`` for none (made once per table and shared: never mutate them).
        Nodes without control inputs share one empty list."""
        if self._inputs is None:
            ref = self.__getitem__  # C-level lookups; __missing__ parses the rare other spellings
            nodes = graph.nodes
            self._inputs = ([list(map(ref, node.inputs)) for node in nodes],
                            [list(map(ref, node.control_inputs)) if node.control_inputs else _NONE for node in nodes])
        return self._inputs

    def data_inputs(self, graph: Graph) -> list[list[int]]:
        """:meth:`inputs`' data inputs, except that an empty reference (an absent optional input) is left
        out rather than naming a node called ``""`` (the shared lists where the graph has no such node)."""
        if "" not in self.index:
            return self.inputs(graph)[0]
        return [[self[r] for r in node.inputs if r] for node in graph.nodes]

    @classmethod
    def of(cls, graph: Graph, index: dict[str, int] | None = None) -> Refs:
        """The references of ``graph`` (``index``: its name -> position map, when the caller has it);
        the pinned table while ``graph`` is :func:`pinned`, else the reader's (:func:`offer`) if the
        graph is still as read."""
        if index is None:
            held = _pinned.get(id(graph))
            if held is not None and held[0] is graph:
                return held[1]
            offered = _take(graph)
            if offered is not None:
                return offered
        return cls(index if index is not None else {n.name: i for i, n in enumerate(graph.nodes)}, graph.dialect)

    def __missing__(self, ref: str) -> int:
        found = self[ref] = self.index.get(Node.producer(ref), -1)
        return found


_OFFERED = "_airctl_refs"  # graph.__dict__ key of a reader's table (not a dataclass field: not compared)


def offer(graph: Graph, refs: Refs) -> None:
    """Hand ``refs``, made by the reader of ``graph`` while checking it (its inputs resolved), to the
    graph's first :meth:`Refs.of` or :func:`pinned`: the reader resolves every reference of a snapshot
    anyway, and the report then resolves them all again (50k nodes: about 80 ms a snapshot). Only
    for a graph used as it was read (the reader's caller asks for it: ``read_graph(keep_refs=True)``);
    a graph whose node count changed meanwhile gets a fresh table."""
    graph.__dict__[_OFFERED] = (len(graph.nodes), refs)


def _take(graph: Graph) -> Refs | None:
    count, refs = graph.__dict__.pop(_OFFERED, (None, None))
    return refs if count == len(graph.nodes) else None


_pinned: dict[int, tuple[Graph, Refs]] = {}  # id(graph) -> (graph, its table) while pinned
_lock = threading.Lock()


@contextmanager
def pinned(graph: Graph, refs: Refs | None = None) -> Iterator[Refs]:
    """``graph``'s table (``refs``: one made earlier by a pin of the same, unchanged graph), returned by
    every :meth:`Refs.of` of it inside the block (nested pins share it). The graph's nodes must not be
    renamed, added, removed or reordered meanwhile."""
    key = id(graph)  # unique while pinned: the entry keeps the graph alive
    with _lock:
        held = _pinned.get(key)
        mine = held is None
        if held is None:
            held = _pinned[key] = (graph, refs if refs is not None else Refs.of(graph))
    try:
        yield held[1]
    finally:
        if mine:
            with _lock:
                _pinned.pop(key, None)

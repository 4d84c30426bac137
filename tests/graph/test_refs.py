"""``Refs`` answers what parsing each reference would: ``index.get(Node.producer(ref), -1)``, whatever
the names (colons, carets, names that look like references) and references (any spelling)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from airctl.graph.model import Graph, Node
from airctl.graph.refs import Refs

_NAME = st.text(alphabet="ab^:0-1", min_size=0, max_size=5)


@settings(max_examples=400, deadline=None)
@given(names=st.lists(_NAME, max_size=8), refs=st.lists(_NAME, max_size=12), ge=st.booleans())
def test_refs_resolve_every_reference_as_node_producer_does(names: list[str], refs: list[str], ge: bool) -> None:
    graph = Graph("g", "ge" if ge else "fx", [Node(n, "Op") for n in names])
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    found = Refs.of(graph)
    for ref in [*refs, *(f"{n}:0" for n in names), *(f"^{n}" for n in names), *names]:
        assert found[ref] == index.get(Node.producer(ref), -1), ref

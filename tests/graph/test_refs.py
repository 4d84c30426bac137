"""``Refs`` answers what parsing each reference would: ``index.get(Node.producer(ref), -1)``, whatever
the names (colons, carets, names that look like references) and references (any spelling)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from airctl.graph.model import Graph, Node
from airctl.graph.refs import Refs, pinned

_NAME = st.text(alphabet="ab^:0-1", min_size=0, max_size=5)


@settings(max_examples=400, deadline=None)
@given(names=st.lists(_NAME, max_size=8), refs=st.lists(_NAME, max_size=12), ge=st.booleans())
def test_refs_resolve_every_reference_as_node_producer_does(names: list[str], refs: list[str], ge: bool) -> None:
    graph = Graph("g", "ge" if ge else "fx", [Node(n, "Op") for n in names])
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    found = Refs.of(graph)
    for ref in [*refs, *(f"{n}:0" for n in names), *(f"^{n}" for n in names), *names]:
        assert found[ref] == index.get(Node.producer(ref), -1), ref


@settings(max_examples=200, deadline=None)
@given(names=st.lists(_NAME, max_size=8), refs=st.lists(_NAME, max_size=12), ge=st.booleans())
def test_inputs_are_each_references_producer(names: list[str], refs: list[str], ge: bool) -> None:
    nodes = [Node(n, "Op", inputs=refs[k::3], control_inputs=refs[k + 1::5]) for k, n in enumerate(names)]
    graph = Graph("g", "ge" if ge else "fx", nodes)
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    data_in, ctrl_in = Refs.of(graph).inputs(graph)
    assert data_in == [[index.get(Node.producer(r), -1) for r in n.inputs] for n in nodes]
    assert ctrl_in == [[index.get(Node.producer(r), -1) for r in n.control_inputs] for n in nodes]


def test_a_pinned_graph_has_one_table_for_every_reader_until_the_pin_ends() -> None:
    graph = Graph("g", "ge", [Node("a", "Data"), Node("b", "Add", inputs=["a:0"])])
    other = Graph("g", "ge", [Node("a", "Data")])
    with pinned(graph) as refs:
        assert Refs.of(graph) is refs and Refs.of(graph).inputs(graph) is refs.inputs(graph)
        with pinned(graph) as inner:  # nested: the same table, still pinned after the inner block
            assert inner is refs
        assert Refs.of(graph) is refs
        assert Refs.of(other) is not Refs.of(other)  # not pinned: a table per call
    assert Refs.of(graph) is not refs
    with pinned(graph, refs) as again:  # a table made by an earlier pin, handed back
        assert again is refs and Refs.of(graph) is refs


def test_a_reader_hands_its_table_to_the_first_user_of_the_graph_as_read(tmp_path) -> None:
    """``read_graph(keep_refs=True)`` resolves the references once, for its check and for the graph's
    first :meth:`Refs.of` (the report's pin); that user gets the reader's table, a later one its own."""
    from airctl.io.json_io import write_json
    from airctl.io.read import read_graph

    path = tmp_path / "g.json"
    path.write_text(write_json(Graph("g", "ge", [Node("a", "Data"), Node("b", "Add", inputs=["a:0", "a:1", ""]),
                                                 Node("c", "Mul", inputs=["b:0"], control_inputs=["^a"])])))
    graph = read_graph(path, keep_refs=True)
    first = Refs.of(graph)
    assert first.inputs(graph) == ([[], [0, 0, -1], [1]], [[], [], [0]])  # resolved by the reader already
    assert first._inputs is not None and Refs.of(graph) is not first  # taken once
    with pinned(read_graph(path, keep_refs=True)) as refs:
        assert refs._inputs is not None  # the pin got the reader's table too
    plain = read_graph(path)
    assert Refs.of(plain)._inputs is None  # not asked for: nothing handed over


def test_a_graph_grown_after_reading_gets_a_fresh_table(tmp_path) -> None:
    from airctl.io.json_io import write_json
    from airctl.io.read import read_graph

    path = tmp_path / "g.json"
    path.write_text(write_json(Graph("g", "ge", [Node("a", "Data")])))
    graph = read_graph(path, keep_refs=True)
    graph.nodes.append(Node("b", "Add", inputs=["a:0"]))
    assert Refs.of(graph).inputs(graph) == ([[], [0]], [[], []])

"""The `graph():` listing reader: what torch prints, read back into the graph model; what is lost; bad input."""

from __future__ import annotations

import math

import pytest

from airctl.errors import GraphReadError
from airctl.io.fx_listing import parse_fx_listing
from airctl.io.read import read_graph

DOCS = """graph():
    %arg0_1 : [num_users=2] = placeholder[target=arg0_1]
    %scope_enter_default : [num_users=0] = call_function[target=torch.ops.air.scope_enter.default](args = ([_user_stream_label], [stream_1]), kwargs = {})
    %mm : [num_users=2] = call_function[target=torch.ops.aten.mm.default](args = (%arg0_1, %arg0_1), kwargs = {})
    %abs_1 : [num_users=1] = call_function[target=torch.ops.aten.abs.default](args = (%mm,), kwargs = {})
    %record_default : [num_users=1] = call_function[target=torch.ops.air.record.default](args = (), kwargs = {})
    %scope_exit_default : [num_users=0] = call_function[target=torch.ops.air.scope_exit.default](args = (), kwargs = {})
    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%abs_1, 1), kwargs = {})
    %wait_default : [num_users=0] = call_function[target=torch.ops.air.wait.default](args = ([%record_default],), kwargs = {})
    %sub : [num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%arg0_1, %mm), kwargs = {})
    return (add, sub)
"""  # noqa: E501 - TorchAir's DEBUG log, as printed


def test_docs_listing_reads_like_read_fx() -> None:
    g = parse_fx_listing(DOCS, "debug.log", "g", first_line=10)
    rows = [(n.name, n.op, n.kind, n.inputs, n.stream) for n in g.nodes]
    assert rows == [
        ("arg0_1", "placeholder", "placeholder", [], None),
        ("scope_enter_default", "air.scope_enter.default", "call_function", [], None),
        ("mm", "aten.mm.default", "call_function", ["arg0_1"], "stream_1"),  # distinct inputs, as all_input_nodes
        ("abs_1", "aten.abs.default", "call_function", ["mm"], "stream_1"),
        ("record_default", "air.record.default", "call_function", [], "stream_1"),
        ("scope_exit_default", "air.scope_exit.default", "call_function", [], "stream_1"),
        ("add", "aten.add.Tensor", "call_function", ["abs_1"], None),
        ("wait_default", "air.wait.default", "call_function", ["record_default"], None),
        ("sub", "aten.sub.Tensor", "call_function", ["arg0_1", "mm"], None),
        ("output", "output", "output", ["add", "sub"], None),
    ]
    assert g.node("scope_enter_default").attrs == {"args": [["_user_stream_label"], ["stream_1"]]}
    assert g.node("add").attrs == {"args": ["%abs_1", 1]}
    assert g.node("wait_default").attrs == {"args": [["%record_default"]]}
    assert g.node("output").attrs == {"args": [["%add", "%sub"]]}
    assert g.node("mm").meta == {"line": 13} and g.attrs == {"origin": "debug.log"}  # where each node is listed


def test_values_kwargs_and_what_the_unquoted_text_loses() -> None:
    text = "\n".join([
        "graph():",
        "    %x : [num_users=3] = placeholder[target=x]",
        "    %s : [num_users=1] = call_function[target=torch.ops.aten.sym_size.int](args = (%x, 0), kwargs = {})",
        "    %e : [num_users=1] = call_function[target=torch.ops.aten.empty.memory_format](args = ([%s, 3],), "
        "kwargs = {dtype: torch.bfloat16, device: cpu, pin_memory: False})",
        "    %a : [num_users=1] = call_function[target=torch.ops.aten.add.Scalar](args = (%x, -inf), kwargs = {})",
        "    %v : [num_users=0] = call_method[target=view](args = (%x, -1), kwargs = {})",
        "    %c : [num_users=0] = get_attr[target=_tensor_constant0]",
        "    %f : [num_users=0] = call_function[target=torch.ops.aten.full.default](args = ([2], a b), kwargs = {})",
        "    %t : [num_users=0] = call_function[target=torch.ops.air.tagged_event_record.default](args = (1, True), "
        "kwargs = {})",
        "    %g : [num_users=1] = call_function[target=operator.getitem](args = (%e, slice(None, 2, None)), "
        "kwargs = {})",
        "    %k : [num_users=0] = call_function[target=torch.ops.air.scope_enter.default](args = ([_user_stream_label, "
        "_enable_inner_parallel], [1, True]), kwargs = {need_execute: True})",
        "    return (a, None, g)",
    ])
    g = parse_fx_listing(text)
    assert g.node("e").attrs == {"args": [["%s", 3]], "kwargs": {"dtype": "torch.bfloat16", "device": "cpu",
                                                                  "pin_memory": False}}
    assert g.node("a").attrs["args"][1] == -math.inf
    assert (g.node("v").op, g.node("v").kind) == ("view", "call_method")
    assert (g.node("c").op, g.node("c").kind, g.node("c").attrs) == ("_tensor_constant0", "get_attr",
                                                                     {"target": "_tensor_constant0"})
    assert g.node("f").attrs["args"] == [[2], "a b"]  # a string with a space survives
    assert g.node("t").attrs["args"] == [1, True]  # ...but '1' and 'True' cannot be told from int and bool
    assert (g.node("g").op, g.node("g").attrs["args"]) == ("getitem", ["%e", "slice(None, 2, None)"])
    # scope_enter's schema is str[] keys, str[] values: its atoms stay strings, its kwargs keep their types
    assert g.node("k").attrs == {"args": [["_user_stream_label", "_enable_inner_parallel"], ["1", "True"]],
                                 "kwargs": {"need_execute": True}}
    assert g.node("output").attrs == {"args": [["%a", None, "%g"]]} and g.node("output").inputs == ["a", "g"]


def test_string_scope_args_are_read_as_strings_not_lists() -> None:
    text = DOCS.replace("args = ([_user_stream_label], [stream_1])", "args = (_user_stream_label, stream_1)")
    g = parse_fx_listing(text)
    assert g.node("scope_enter_default").attrs["args"] == ["_user_stream_label", "stream_1"]
    assert g.node("mm").stream is None  # not a stream scope: TorchAir zips the characters


def test_dynamo_listing_with_types_and_python_targets() -> None:
    text = ("graph():\n    %l_x_ : torch.Tensor [num_users=2] = placeholder[target=L_x_]\n"
            "    %mm : [num_users=1] = call_function[target=torch.mm](args = (%l_x_, %l_x_), kwargs = {})\n"
            "    return (mm,)")
    g = parse_fx_listing(text)
    assert [(n.name, n.op) for n in g.nodes] == [("l_x_", "placeholder"), ("mm", "torch.mm"), ("output", "output")]


@pytest.mark.parametrize(("text", "line", "words"), [
    ("graph():\n    %x : [num_users=1] = placeholder[target=x]\n    junk here", 3, "not a node line"),
    ("graph():\n    %y : [num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%x,), "
     "kwargs = {})", 2, "uses %x before it is defined"),
    ("graph():\n    %x : [num_users=1] = placeholder[target=x]\n    %x : [num_users=1] = placeholder[target=x]", 3,
     "listed twice"),
    ("graph():\n    %y : [num_users=1] = call_function[target=f](args = ((((, kwargs = {})", 2, "column"),
    ("graph():\n    %y : [num_users=1] = call_function[target=f](args = " + "(" * 100 + ")" * 100 + ", kwargs = {})",
     2, "nested too deeply"),
    ("graph():\n    %x : [num_users=1] = placeholder[target=x]\n    return (x,)\n    %z : [num_users=0] = "
     "placeholder[target=z]", 4, "after the `return`"),
])
def test_bad_listings_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(GraphReadError) as info:
        parse_fx_listing(text, "saved.txt", first_line=1)
    assert info.value.file == "saved.txt" and info.value.line == line and words in str(info.value)


def test_read_graph_recognises_a_listing_whatever_its_extension(tmp_path) -> None:
    for name in ("fx_graph.txt", "listing", "g.log.txt"):
        (tmp_path / name).write_text(DOCS)
        g = read_graph(tmp_path / name)
        assert g.dialect == "fx" and len(g) == 10

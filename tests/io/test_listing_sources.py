"""The readable code kept beside each FX stage names the user's lines, never airctl's own files (issue 62):
sim's factory wrappers are inlined by Dynamo and were the innermost frame above every factory op."""

from __future__ import annotations

import airctl.sim.patched_torch_device_word as word
from airctl.io.listing import fx_code


def test_readable_code_names_the_users_line_above_a_factory_op() -> None:
    import torch
    import torch.fx

    class Model(torch.nn.Module):
        def forward(self, x):  # noqa: ANN001, ANN202
            return x + 1

    gm = torch.fx.symbolic_trace(Model())
    trace = (f'  File "/w/model.py", line 12, in forward\n    mask = torch.ones(4, device="npu")\n'
             f'  File "{word.__file__}", line 77, in factory\n    return original(*args, **kwargs)\n')
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    node.meta["stack_trace"] = trace
    code = fx_code(gm)
    assert "# File: /w/model.py:12 in forward" in code
    assert "patched_torch_device_word" not in code
    assert node.meta["stack_trace"] == trace  # the graph itself is left as it was


def test_the_listing_of_an_fx_graph_writes_each_call_as_it_is() -> None:
    """``airctl dump --type fx``: a repeated input, numbers, lists and keywords, as the call has them
    (the inputs alone are each node once); a GE op's inputs, one per use."""
    import torch
    import torch.fx

    from airctl.io.fx_reader import read_fx
    from airctl.io.listing import format_listing

    class Model(torch.nn.Module):
        def forward(self, x):  # noqa: ANN001, ANN202
            y = torch.mm(x, x)
            return torch.sum(y + 1, dim=[0], keepdim=True), torch.cat([x, y], 0)

    text = format_listing(read_fx(torch.fx.symbolic_trace(Model()), "g"))
    assert "mm = torch.mm(x, x)" in text and "add = add(mm, 1)" in text
    assert "sum_1 = torch.sum(add, dim=[0], keepdim=True)" in text and "cat = torch.cat([x, mm], 0)" in text
    assert "output = output([sum_1, cat])" in text


def test_the_listing_writes_a_snapshots_odd_values_on_one_line_and_never_fails() -> None:
    """Graph files are untrusted: a string that looks like a node but is none, a newline in a value,
    the snapshot's spelling of infinity, keywords that are not a mapping (the inputs then)."""
    from airctl.graph.model import Graph, Node
    from airctl.io.listing import format_listing

    g = Graph("g", "fx", [Node("x", "placeholder", kind="placeholder"),
                          Node("c", "aten.clamp.default", ["x"], attrs={"args": ["%x", "%y\nfloor"],
                                                                         "kwargs": {"max": "Infinity"}}),
                          Node("d", "aten.abs.default", ["c"], attrs={"args": ["%c"], "kwargs": ["bad"]})])
    lines = format_listing(g).splitlines()
    assert lines[2] == "c = aten.clamp.default(x, '%y\\nfloor', max=inf)", lines
    assert lines[3] == "d = aten.abs.default(c)" and len(lines) == 4, lines

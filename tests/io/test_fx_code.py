"""The print_readable reader: TorchAir's TORCH_COMPILE_DEBUG stage files and reduce-overhead py dumps."""

from __future__ import annotations

import pytest

from airctl.errors import GraphReadError
from airctl.io.fx_code import parse_fx_code, tensor_meta

AFTER_PASS = '''class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[3, 3]"):
        # No stacktrace found for following nodes
        scope_enter_default = torch.ops.air.scope_enter.default(['_user_stream_label'], ['stream_1']);  scope_enter_default = None

        # File: ex1.py:23 in forward, code: mm = torch.mm(x, x)
        mm: "f32[3, 3]" = torch.ops.aten.mm.default(arg0_1, arg0_1)

        # No stacktrace found for following nodes
        record_default = torch.ops.air.record.default()
        scope_exit_default = torch.ops.air.scope_exit.default();  scope_exit_default = None
        wait_default = torch.ops.air.wait.default([record_default]);  record_default = wait_default = None

        # File: ex1.py:26 in forward, code: sub = torch.sub(x, mm)
        sub: "f32[3, 3]" = torch.ops.aten.sub.Tensor(arg0_1, mm);  arg0_1 = mm = None
        return (sub,)
'''  # noqa: E501 - as TorchAir writes it


def test_stage_file_reads_with_exact_strings_sources_and_shapes() -> None:
    g = parse_fx_code(AFTER_PASS, "001_aot_forward_graph_after_post_grad_custom_pre_pass.txt")
    assert [(n.name, n.op, n.inputs, n.stream, n.source) for n in g.nodes] == [
        ("arg0_1", "placeholder", [], None, None),
        ("scope_enter_default", "air.scope_enter.default", [], None, None),
        ("mm", "aten.mm.default", ["arg0_1"], "stream_1", "ex1.py:23"),
        ("record_default", "air.record.default", [], "stream_1", None),
        ("scope_exit_default", "air.scope_exit.default", [], "stream_1", None),
        ("wait_default", "air.wait.default", ["record_default"], None, None),
        ("sub", "aten.sub.Tensor", ["arg0_1", "mm"], None, "ex1.py:26"),
        ("output", "output", ["sub"], None, None),
    ]
    assert g.node("scope_enter_default").attrs == {"args": [["_user_stream_label"], ["stream_1"]]}
    assert g.node("mm").meta == {"tensors": [{"shape": [3, 3], "dtype": "float32"}]}


def test_dynamo_graph_names_its_placeholders_and_reads_python_calls() -> None:
    code = '''class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3, 3]", L_self_buf: "i64[4]"):
        l_x_ = L_x_
        mm: "f32[3, 3]" = torch.mm(l_x_, l_x_)
        v = mm.view(-1)
        lin = self.L__self___linear(v)
        w = self.L__self___linear.weight
        s = lin.size(0)
        t = s * 2
        g = lin[0]
        z = torch.zeros([t], dtype = torch.float16, device = device(type='cpu'))
        return (g, z, L_self_buf)
'''
    g = parse_fx_code(code)
    rows = {n.name: (n.op, n.kind, n.inputs) for n in g.nodes}
    assert rows["l_x_"] == ("placeholder", "placeholder", [])
    assert "L_x_" not in rows and rows["L_self_buf"] == ("placeholder", "placeholder", [])
    assert rows["mm"] == ("torch.mm", "call_function", ["l_x_"])
    assert rows["v"] == ("view", "call_method", ["mm"]) and g.node("v").attrs["args"] == ["%mm", -1]
    assert rows["lin"] == ("L__self___linear", "call_module", ["v"])
    assert rows["w"] == ("L__self___linear.weight", "get_attr", [])
    assert rows["t"] == ("mul", "call_function", ["s"])
    assert rows["g"] == ("getitem", "call_function", ["lin"]) and g.node("g").attrs["args"] == ["%lin", 0]
    assert g.node("z").attrs["kwargs"] == {"dtype": "torch.float16", "device": "device(type='cpu')"}
    assert g.node("output").inputs == ["g", "z", "L_self_buf"]


def test_torchair_aot_file_with_its_lambda_class() -> None:
    code = 'class <lambda>(torch.nn.Module):\n    def forward(self, arg0_1: "bf16[2, s0]"):\n        return (arg0_1,)\n'
    g = parse_fx_code(code)
    assert g.nodes[0].meta == {"tensors": [{"shape": [2, "s0"], "dtype": "bfloat16"}]}


def test_tensor_meta_of_odd_annotations() -> None:
    assert tensor_meta(None) == {} and tensor_meta("Sym(s0)") == {} and tensor_meta("f32[]") == {
        "tensors": [{"shape": [], "dtype": "float32"}]}


@pytest.mark.parametrize(("code", "line", "words"), [
    ("class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        y = (\n", 3, "not Python"),
    ("x = 1\n", None, "no `class"),
    ("class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        y = torch.neg(x)\n", 2, "no return"),
    ("class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        for i in x: pass\n        return x\n",
     3, "unexpected statement"),
    ("class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        y = torch.neg(x)\n        y = "
     "torch.neg(y)\n        return y\n", 4, "assigned twice"),
])
def test_bad_code_names_the_line(code: str, line: int | None, words: str) -> None:
    with pytest.raises(GraphReadError) as info:
        parse_fx_code(code, "stage.txt")
    assert info.value.file == "stage.txt" and words in str(info.value)
    if line is not None:
        assert info.value.line == line

"""Custom ops under sim: the IR registry from declarations (YAML, CANN JSON/INI), keyword-form
converters without one, and what a missing declaration says. Compiles are marked slow."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from airctl.errors import SpecError
from airctl.sim.ascend_ir import AscendIr, from_keyword_call, missing_hint
from airctl.sim.ascend_ir_files import declaration_files, find_declarations, read_declarations
from tests.conftest import MODELS, ledger_text


def test_yaml_declarations_with_kinds_types_and_includes(tmp_path: Path) -> None:
    (tmp_path / "op.json").write_text(json.dumps([{
        "op": "GeluMul", "input_desc": [{"name": "x", "param_type": "required"},
                                        {"name": "bias", "param_type": "optional"}],
        "output_desc": [{"name": "z", "param_type": "required"}],
        "attr": [{"name": "approx", "type": "string"}, {"name": "dims", "type": "list_int"}]}]))
    (tmp_path / "ops-info.ini").write_text(
        "[Gather2]\ninput1.name=idx\ninput1.paramType=required\ninput0.name=xs\ninput0.paramType=dynamic\n"
        "output0.name=y\noutput0.paramType=required\nattr.list=axis,keep\nattr_axis.type=int\n"
        "attr_keep.type=bool\n")
    (tmp_path / "m.ascend_ir.yaml").write_text(
        "ops:\n  ScaledAdd:\n    inputs: [x, {y: optional}]\n    outputs: [z, {rest: dynamic}]\n"
        "    attrs: {alpha: float, dims: listInt, dt: VT_DATA_TYPE}\n"
        "include: [op.json, ops-info.ini]\n")
    table = find_declarations(tmp_path / "m.py")
    assert table.files == [str(tmp_path / "m.ascend_ir.yaml")]
    assert table.lookup("ScaledAdd") == ("SUCCESS", [("x", "required"), ("y", "optional")],
                                         [("z", "required"), ("rest", "dynamic")],
                                         [("alpha", "VT_FLOAT"), ("dims", "VT_LIST_INT"), ("dt", "VT_DATA_TYPE")])
    assert table.lookup("GeluMul") == ("SUCCESS", [("x", "required"), ("bias", "optional")], [("z", "required")],
                                       [("approx", "VT_STRING"), ("dims", "VT_LIST_INT")])
    assert table.lookup("Gather2") == ("SUCCESS", [("xs", "dynamic"), ("idx", "required")], [("y", "required")],
                                       [("axis", "VT_INT"), ("keep", "VT_BOOL")])
    assert table.lookup("Unknown")[0] == "ERROR" and table.missing == ["Unknown"]


def test_declaration_file_names(tmp_path: Path) -> None:
    model = tmp_path / "net.py"
    assert declaration_files(model) == []
    (tmp_path / "ascend_ir.yaml").write_text("ops: {}\n")
    assert declaration_files(model) == [tmp_path / "ascend_ir.yaml"]
    (tmp_path / "net.ascend_ir.yaml").write_text("ops: {}\n")
    assert declaration_files(model) == [tmp_path / "net.ascend_ir.yaml"]  # the model's own file first


def test_json_nested_too_deep_and_a_fifo_are_errors_naming_the_file(tmp_path: Path) -> None:
    import os

    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    os.mkfifo(tmp_path / "fifo.json")
    for name in ("deep.json", "fifo.json"):
        (tmp_path / "ascend_ir.yaml").write_text(f"include: [{name}]\n")
        with pytest.raises(SpecError) as e:
            read_declarations(tmp_path / "ascend_ir.yaml")
        assert e.value.file == str(tmp_path / name), e.value


@pytest.mark.parametrize("text,message,line", [
    ("ops:\n  A:\n    inputs: [x]\n    attrs: {alpha: floaty}\n", "unknown attribute type 'floaty'", 2),
    ("ops:\n  A:\n    inputs: [{x: sometimes}]\n", "inputs `x` is 'sometimes'", 2),
    ("ops:\n  A:\n    input: [x]\n", "give `inputs`, `outputs` and `attrs`", 2),
    ("opz: {}\n", "the keys `ops` and `include`", 1),
    ("ops: [\n", "invalid YAML", 2),
    ("include: [nope.json]\n", "not found", None),
    ("include: [ascend_ir.yaml]\n", "include themselves (ascend_ir.yaml -> ascend_ir.yaml)", None),
])
def test_bad_declarations_name_file_line_and_how(tmp_path: Path, text: str, message: str, line: int | None) -> None:
    path = tmp_path / "ascend_ir.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as e:
        read_declarations(path)
    assert message in e.value.message and e.value.hint
    assert e.value.file.endswith(("ascend_ir.yaml", "nope.json"))
    if line is not None:
        assert e.value.line == line


def test_keyword_call_is_answered_from_the_call_only_while_it_runs() -> None:
    from types import SimpleNamespace

    table = AscendIr()
    Float = type("Float", (), {})  # noqa: N806 - torchair.ge.attr's class names tell the type
    with table.keyword_call("Acc", {"acc": object(), "x": object(), "b": None, "xs": [1, 2]}, ["acc", ("ys", 2)],
                            {"alpha": Float()}):
        answer = table.lookup("Acc")
    assert answer == ("SUCCESS", [("acc", "required"), ("x", "required"), ("b", "optional"), ("xs", "dynamic")],
                      [("acc", "required"), ("ys", "dynamic")], [("alpha", "VT_FLOAT")])
    assert table.assumed == ["Acc"] and table.lookup("Acc")[0] == "ERROR"
    assert from_keyword_call(None, None, {"s": SimpleNamespace()}).attrs == [("s", "VT_STRING")]


def test_missing_hint_names_the_file_the_format_and_an_example_from_the_schema() -> None:
    import torch

    from airctl.sim.session import load_torchair

    load_torchair()
    if not hasattr(torch.ops.airctl_hint, "mix"):
        torch.library.define("airctl_hint::mix", "(Tensor x, Tensor? bias, Tensor[] rest, float alpha, int[] dims) "
                             "-> Tensor")
    message = ("No AscendIR Mix was found to be registered. Please make sure...\nWhile executing %mix : "
               "call_function[target=torch.ops.airctl_hint.mix.default](args = (%x,))")
    hint = missing_hint(message, "models/net.py")
    assert hint is not None
    assert "models/net.ascend_ir.yaml" in hint and "ops:\n    Mix:\n" in hint
    assert "inputs: [x, {bias: optional}, {rest: dynamic}]" in hint
    assert "attrs: {alpha: float, dims: list_int}" in hint and "outputs: [out]" in hint
    assert "include:" in hint and "inputs=..., outputs=..., attrs=..." in hint
    assert missing_hint("some other error", "m.py") is None
    v3 = missing_hint("No AscendIR NpuFusionAttentionV3 was found to be registered", None)
    assert v3 is not None and "AIRCTL_SIM_SOC=Ascend950" in v3


# -- compiles ------------------------------------------------------------------------------------
def _compile(model: Path, out: Path, mode: str = "max-autotune"):
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    return compile_model(CompileRequest.of(model, mode=mode, out_dir=out, backend="sim"))


def _ge_nodes(result, stage: str = "ge-original") -> dict:
    from airctl.ledger.reader import Ledger

    led = Ledger.open(result.ledger_dir)
    return {n.name: n for n in led.load(led.find_stage(stage))}


@pytest.mark.slow
def test_keyword_form_converters_need_no_declaration(tmp_path: Path) -> None:
    result = _compile(MODELS / "custom_ops.py", tmp_path)
    assert result.error is None, result.error
    assert result.execution.matches_eager and result.execution.max_abs_error == 0
    nodes = _ge_nodes(result)
    assert nodes["ScaledAdd"].op == "ScaledAdd" and nodes["ScaledAdd"].attrs["alpha"] == 0.5
    acc = nodes["Accumulate"]  # in place: TensorMove of the state, outputs acc and z
    assert acc.op == "Accumulate" and acc.inputs == ["TensorMove:0", "ScaledAdd:0"]
    assert [o["name"] for o in acc.meta["outputs"]] == ["acc", "z"]
    dump = next(d for d in result.index.dumps if d.stage == "ge-original" and d.type == "txt")
    text = ledger_text(result.ledger_dir / dump.file)  # TorchAir's own GE dump has the IR op and its attribute
    assert 'type: "ScaledAdd"' in text and 'type: "Accumulate"' in text and 'key: "alpha"' in text
    assert any("ScaledAdd, Accumulate was taken from the converter's keyword call" in n for n in result.index.notes)


@pytest.mark.slow
def test_declared_ir_serves_positional_and_generated_converters(tmp_path: Path) -> None:
    result = _compile(MODELS / "custom_ops_declared.py", tmp_path)
    assert result.error is None, result.error
    assert result.execution.matches_eager
    nodes = _ge_nodes(result)
    assert nodes["ScaledMul"].attrs["alpha"] == 2.0 and nodes["ScaledMul"].inputs == ["arg0_1:0", "arg1_1:0"]
    assert nodes["GeluMul"].op == "GeluMul" and nodes["GeluMul"].inputs == ["ScaledMul:0", "arg1_1:0"]
    assert not result.index.notes


@pytest.mark.slow
def test_without_a_declaration_the_error_says_how_to_declare(tmp_path: Path) -> None:
    model = tmp_path / "mine.py"
    shutil.copy(MODELS / "custom_ops_declared.py", model)
    result = _compile(model, tmp_path / "runs")
    assert result.error is not None and result.index.status == "failed"
    assert "No AscendIR ScaledMul was found to be registered" in result.error.message
    hint = result.error.hint
    assert str(tmp_path / "mine.ascend_ir.yaml") in hint
    assert "    ScaledMul:\n      inputs: [x, y]\n      outputs: [out]\n      attrs: {alpha: float}" in hint
    assert result.error.node == "scaled_mul"

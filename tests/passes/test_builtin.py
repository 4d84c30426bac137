"""Built-in kinds applied to FX graphs directly (no compile): node placement, keys, groups, errors."""

from __future__ import annotations

import pytest

from airctl.errors import PassError
from airctl.passes import load
from airctl.passes.builtin import SelectorMissed, build, scope_args
from airctl.passes.spec import parse_text
from tests.passes.conftest import PASSES, fx_signature, layered_gm, seed_gm
from tests.passes.handwritten_pass import _custom_pre_pass


def apply_file(spec, gm) -> None:
    for p in spec.passes:
        build(p, PASSES)(gm, None, None)


def ops(gm) -> list[str]:
    from airctl.io.fx_reader import target_name

    return [target_name(n.target) if n.op == "call_function" else n.op for n in gm.graph.nodes]


def test_stream_yaml_equals_the_handwritten_pass(torch_air) -> None:
    """Acceptance 1 (fast form): same nodes, order, targets and args as TorchAir's documented pass."""
    ours, theirs = seed_gm(torch_air), seed_gm(torch_air)
    apply_file(load(PASSES / "stream.yaml"), ours)
    _custom_pre_pass(theirs, None, None)
    assert fx_signature(ours) == fx_signature(theirs)
    assert ops(ours) == ["placeholder", "air.scope_enter.default", "aten.mm.default", "aten.abs.default",
                         "air.record.default", "air.scope_exit.default", "aten.add.Tensor", "air.wait.default",
                         "aten.sub.Tensor", "output"]


def test_scope_keys_follow_torchair_with_the_label_first() -> None:
    spec = parse_text("version: 1\npasses:\n"
                      "  - {name: a, kind: stream_scope, stream: s1, priority: 3, inner_parallel: true,"
                      " select: {target: x}}\n"
                      "  - {name: b, kind: limit_core_num, aicore_num: 4, vectorcore_num: 8, select: {target: x}}\n"
                      "  - {name: c, kind: super_kernel, scope: sk, select: {target: x}}\n"
                      "  - {name: d, kind: op_never_timeout, select: {target: x}}\n")
    assert [scope_args(p) for p in spec.passes] == [
        (["_user_stream_label", "_user_stream_priority", "_enable_inner_parallel"], ["s1", "3", "True"]),
        (["_op_aicore_num", "_op_vectorcore_num"], ["4", "8"]),
        (["_super_kernel_scope", "_super_kernel_options"], ["sk", ""]),
        (["_op_exec_never_timeout"], ["True"]),
    ]


def test_each_module_group_gets_its_own_scope_record_and_wait(torch_air) -> None:
    gm = layered_gm(torch_air)
    spec = parse_text(
        "version: 1\npasses:\n"
        "  - {name: mlp, kind: stream_scope, stream: s, select: {module: 'layers.*.mlp'}, each: true, record: true}\n"
        "  - {name: join, kind: wait, before: {target: aten.add.Tensor}, each: true, on: mlp}\n")
    apply_file(spec, gm)
    seq = [n.name for n in gm.graph.nodes]
    assert seq == ["x", "scope_enter_default", "mm", "relu", "mm_1", "record_default", "scope_exit_default",
                   "wait_default", "add", "scope_enter_default_1", "mm_2", "relu_1", "mm_3", "record_default_1",
                   "scope_exit_default_1", "wait_default_1", "add_1", "output"]
    waits = [n for n in gm.graph.nodes if n.name.startswith("wait")]
    assert [w.args[0][0].name for w in waits] == ["record_default", "record_default_1"]  # latest preceding record


def test_selector_miss_leaves_the_graph_unchanged(torch_air) -> None:
    gm = seed_gm(torch_air)
    before = fx_signature(gm)
    spec = parse_text("version: 1\npasses:\n  - {name: a, kind: stream_scope, stream: s,"
                      " range: {from: {target: aten.mm.default}, to: {target: aten.matmul.default}}}\n")
    with pytest.raises(SelectorMissed) as info:
        apply_file(spec, gm)
    assert "`to` selector (target aten.matmul.default) matched no node" in info.value.message
    assert "aten.mm.default" in info.value.hint
    assert fx_signature(gm) == before


def test_range_that_ends_before_it_starts(torch_air) -> None:
    spec = parse_text("version: 1\npasses:\n  - {name: a, kind: stream_scope, stream: s,"
                      " range: {from: {target: aten.sub.Tensor}, to: {target: aten.mm.default}}}\n")
    with pytest.raises(PassError, match="before it starts"):
        apply_file(spec, seed_gm(torch_air))


def test_overlapping_scope_would_interleave(torch_air) -> None:
    spec = parse_text(
        "version: 1\npasses:\n"
        "  - {name: a, kind: stream_scope, stream: s, range: {from: {target: aten.mm.default},"
        " to: {target: aten.abs.default}}}\n"
        "  - {name: b, kind: stream_scope, stream: t, range: {from: {target: aten.abs.default},"
        " to: {target: aten.sub.Tensor}}}\n")
    with pytest.raises(PassError, match="crosses the end of an enclosing scope"):
        apply_file(spec, seed_gm(torch_air))


def test_wait_without_an_earlier_record(torch_air) -> None:
    spec = parse_text(
        "version: 1\npasses:\n"
        "  - {name: r, kind: record, after: {target: aten.sub.Tensor}}\n"
        "  - {name: w, kind: wait, before: {target: aten.mm.default}, on: r}\n")
    with pytest.raises(PassError, match="no record of `r` precedes `mm`"):
        apply_file(spec, seed_gm(torch_air))

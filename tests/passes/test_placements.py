"""Placements: every pass lists the units it placed, and `placements:` keeps only some of them."""

from __future__ import annotations

from airctl.passes.builtin import build
from airctl.passes.placements import of, restrict_plugin
from airctl.passes.spec import parse_text
from tests.passes.conftest import layered_gm, seed_gm
from tests.passes.test_builtin import ops

EACH = ("version: 1\npasses:\n  - {name: s, kind: stream_scope, stream: s1, record: true, each: true,"
        " select: {module: 'layers.*'}%s}\n")


def test_each_group_is_a_unit_listed_with_its_nodes(torch_air) -> None:
    gm = layered_gm(torch_air)
    fn = build(parse_text(EACH % "").passes[0])
    fn(gm, None, None)
    found = of(fn).found
    assert [u["unit"] for u in found] == ["mm..add (layers.0.mlp.up)", "mm_2..add_1 (layers.1.mlp.up)"]
    assert found[0]["nodes"] == ["mm", "relu", "mm_1", "add"]
    assert ops(gm).count("air.scope_enter.default") == 2


def test_placements_keep_only_the_units_named(torch_air) -> None:
    gm = layered_gm(torch_air)
    fn = build(parse_text(EACH % ", placements: [1]").passes[0])
    fn(gm, None, None)
    assert len(of(fn).found) == 2 and of(fn).keep == [1]  # both listed, one applied
    enter = next(n for n in gm.graph.nodes if n.name.startswith("scope_enter"))
    assert enter.next.name == "mm_2"  # the scope opens at layers.1, not layers.0
    assert ops(gm).count("air.scope_enter.default") == 1 and ops(gm).count("air.record.default") == 1


def test_wait_sites_are_units(torch_air) -> None:
    spec = parse_text("version: 1\npasses:\n"
                      "  - {name: r, kind: record, after: {target: aten.mm.default}}\n"
                      "  - {name: w, kind: wait, on: r, each: true, placements: [1],"
                      " before: {target: [aten.add.Tensor, aten.sub.Tensor]}}\n")
    gm = seed_gm(torch_air)
    build(spec.passes[0])(gm, None, None)
    wait = build(spec.passes[1])
    wait(gm, None, None)
    assert [u["unit"] for u in of(wait).found] == ["before add", "before sub"]
    waits = [n for n in gm.graph.nodes if n.name.startswith("wait")]
    assert len(waits) == 1 and waits[0].next.name == "sub"


def test_a_python_plugin_is_cut_after_it_ran(torch_air) -> None:
    torch = torch_air

    def add_to_sub(gm, example_inputs, config):
        for node in gm.graph.nodes:
            if node.target == torch.ops.aten.add.Tensor:
                node.target = torch.ops.aten.sub.Tensor
        gm.recompile()

    gm, all_of_them = layered_gm(torch), layered_gm(torch)
    restrict_plugin(add_to_sub, None)(all_of_them, None, None)
    cut = restrict_plugin(add_to_sub, [1])
    cut(gm, None, None)
    assert [u["unit"] for u in of(cut).found] == ["add: aten.add.Tensor -> aten.sub.Tensor",
                                                  "add_1: aten.add.Tensor -> aten.sub.Tensor"]
    assert ops(gm).count("aten.add.Tensor") == 1 and ops(gm).count("aten.sub.Tensor") == 1
    assert ops(all_of_them).count("aten.sub.Tensor") == 2
    assert next(n for n in gm.graph.nodes if n.name == "add").target == torch.ops.aten.add.Tensor  # put back


def test_placements_must_be_indices() -> None:
    import pytest

    from airctl.errors import SpecError

    with pytest.raises(SpecError, match="placements"):
        parse_text(EACH % ", placements: [a]")
